import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import semver from 'semver';
import type { Static } from 'typebox';

import type { Principal } from '../auth/principal.js';
import type { Db } from '../db/client.js';
import type { ToolRow, UpstreamRow } from '../db/schema.js';
import { AppError } from '../errors.js';
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

/**
 * Brings a tenant's tools in line with what an upstream lists: new tools registered, changed ones
 * published as a new version, vanished ones retired, each through the ToolService (validation,
 * versions, audit, indexing as for any publish). Each tool is written in its own transaction: a
 * tool that fails (invalid schema, name taken by a tool the upstream does not serve) is reported
 * in `errors` and the others still sync.
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
    const served = await repo.servedTools(this.db, upstream.tenantId, upstream.name);
    const seen = new Set<string>();
    for (const remote of listed) {
      const document = this.documentFor(upstream, remote, server, outcome);
      if (!document) continue;
      if (seen.has(document.name)) {
        outcome.errors.push({ tool: remote.name, message: `maps to '${document.name}' like another tool of this upstream` });
        continue;
      }
      seen.add(document.name);
      try {
        const result = await this.write(principal, upstream, remote.name, document, served.has(document.name));
        if (result) outcome[result].push(document.name);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        outcome.errors.push({ tool: remote.name, message: error.message });
      }
    }
    for (const name of served.keys()) {
      if (seen.has(name)) continue;
      const row = await this.current(principal, name);
      if (row?.status !== 'active') continue;
      await this.tools.retire(principal, name, undefined);
      outcome.retired.push(name);
    }
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

  private async current(principal: Principal, name: string): Promise<ToolRow | undefined> {
    try {
      return await this.tools.get(principal, name);
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') return undefined;
      throw error;
    }
  }

  /** Registers, re-publishes or restores one tool; what it did, or undefined when nothing changed. */
  private async write(principal: Principal, upstream: UpstreamRow, remoteName: string, document: ToolDocument, ours: boolean): Promise<'added' | 'changed' | undefined> {
    const row = await this.current(principal, document.name);
    if (row && !ours) throw new AppError('conflict', `tool '${document.name}' exists and is not served by upstream '${upstream.name}'; it was left alone`);
    await repo.serveTool(this.db, { tenantId: upstream.tenantId, toolName: document.name, upstreamName: upstream.name, remoteName });
    if (!row) {
      await this.tools.register(principal, document);
      return 'added';
    }
    const stored = documentOf(row);
    const next: ToolDocument = { ...document, version: row.version };
    for (const field of REFINABLE) (next as unknown as Record<string, unknown>)[field] = stored[field];
    const same = contentHash(next) === row.contentHash;
    if (same && row.status === 'active') return undefined;
    if (!same) next.version = semver.inc(row.version, 'minor') ?? FIRST_VERSION;
    await this.tools.replace(principal, document.name, next, undefined);
    return row.status === 'retired' ? 'added' : 'changed';
  }
}
