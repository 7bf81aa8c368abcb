import { setImmediate } from 'node:timers/promises';

import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import semver from 'semver';
import type { Static } from 'typebox';

import type { Principal } from '../auth/principal.js';
import { reconcile, type WantedTool } from '../catalog/reconcile.js';
import type { Db } from '../db/client.js';
import type { UpstreamRow } from '../db/schema.js';
import { mapMcpTool } from '../mcp-client/mapping.js';
import { contentHash } from '../tools/content-hash.js';
import type { ToolDocument } from '../tools/model.js';
import type { ToolService } from '../tools/service.js';
import type { ToolValidator } from '../tools/validation.js';
import { documentOf } from '../tools/views.js';
import * as repo from './repository.js';
import type { SyncResult } from './schemas.js';

export type SyncOutcome = Static<typeof SyncResult>;

/** The version an upstream tool first gets; each change upstream bumps its minor version. */
const FIRST_VERSION = '1.0.0';

/** The card fields a publisher may refine on an upstream tool: a sync keeps them. */
const REFINABLE = ['aliases', 'examples', 'not_for', 'policy'] as const;

/** The catalog source an upstream's tools carry (tools.source): a catalog sync never takes them. */
export const upstreamSource = (upstream: string): string => `upstream:${upstream}`;

/**
 * Brings a tenant's tools in line with what an upstream lists: new tools registered, changed ones
 * published as a new version, vanished ones retired, through the catalog's reconcile loop (the
 * ToolService's validation, versions, audit and indexing, as for any publish). Each tool is
 * written in its own transaction: a tool that fails (invalid schema, name taken by a tool the
 * upstream does not serve) is reported in `errors` and the others still sync.
 */
export class UpstreamSync {
  constructor(
    private readonly db: Db,
    private readonly tools: ToolService,
    private readonly validator: ToolValidator,
    private readonly descriptionLength: number,
  ) {}

  async apply(principal: Principal, upstream: UpstreamRow, listed: Tool[], server: string | undefined): Promise<SyncOutcome> {
    const outcome: SyncOutcome = { added: [], changed: [], retired: [], errors: [] };
    const wanted: WantedTool[] = [];
    const seen = new Set<string>();
    for (const remote of listed) {
      // Checking a tool compiles its schema (milliseconds each): between tools, every other
      // request runs, so an upstream listing thousands of tools does not hold the event loop.
      await setImmediate();
      const document = this.documentFor(upstream, remote, server, outcome);
      if (!document) continue;
      if (seen.has(document.name)) {
        outcome.errors.push({ tool: remote.name, message: `maps to '${document.name}' like another tool of this upstream` });
        continue;
      }
      seen.add(document.name);
      wanted.push({ name: document.name, label: remote.name, checked: (current) => (current ? this.revised(principal, document) : document) });
    }
    const source = upstreamSource(upstream.name);
    const result = await reconcile(this.db, this.tools, principal, wanted, {
      source,
      prune: true,
      dryRun: false,
      refuse: (current) => (current.source === source ? undefined : `tool '${current.name}' exists and is not served by upstream '${upstream.name}'; it was left alone`),
      claim: (tool) => repo.serveTool(this.db, { tenantId: upstream.tenantId, toolName: tool.name, upstreamName: upstream.name, remoteName: tool.label }),
    });
    outcome.added.push(...result.created);
    outcome.changed.push(...result.updated);
    outcome.retired.push(...result.retired);
    outcome.errors.push(...result.errors.map((error) => ({ tool: error.label, message: error.message })));
    return outcome;
  }

  /** The upstream tool as a valid registry document, or undefined with the reason in `errors`. */
  private documentFor(upstream: UpstreamRow, remote: Tool, server: string | undefined, outcome: SyncOutcome): ToolDocument | undefined {
    const { document } = mapMcpTool(remote, {
      prefix: `${upstream.name}_`,
      scopes: upstream.requiredScopes,
      version: FIRST_VERSION,
      ...(upstream.sensitivity ? { sensitivity: upstream.sensitivity } : {}),
      maxDescription: this.descriptionLength,
      serverName: server ?? upstream.name,
    });
    if (upstream.sideEffects !== null) document.side_effects = upstream.sideEffects;
    const checked = this.validator.validate(document);
    if (!checked.ok) {
      outcome.errors.push({ tool: remote.name, message: checked.issues.map((i) => `${i.pointer}: ${i.message}`).join('; ').slice(0, 1000) });
      return undefined;
    }
    return checked.document;
  }

  /**
   * What to publish over the stored tool: the publisher's refinements kept, the stored version when
   * nothing else changed (so a re-sync is a no-op), else its next minor version.
   */
  private async revised(principal: Principal, document: ToolDocument): Promise<ToolDocument> {
    const row = await this.tools.get(principal, document.name);
    const stored = documentOf(row);
    const next: ToolDocument = { ...document, version: row.version };
    for (const field of REFINABLE) (next as unknown as Record<string, unknown>)[field] = stored[field];
    if (contentHash(next) !== row.contentHash) next.version = semver.inc(row.version, 'minor') ?? FIRST_VERSION;
    return next;
  }
}
