import type { Static } from 'typebox';

import type { Principal } from '../auth/principal.js';
import type { Db } from '../db/client.js';
import { AppError, type ErrorDetail } from '../errors.js';
import type { ToolDocument } from '../tools/model.js';
import type { ToolService } from '../tools/service.js';
import type { ToolValidator } from '../tools/validation.js';
import { reconcile, type WantedTool } from './reconcile.js';
import { type CatalogSyncBody, type CatalogSyncResult, RESERVED_SOURCE_PREFIX } from './schemas.js';

export type CatalogSyncInput = Static<typeof CatalogSyncBody>;
export type CatalogSyncOutcome = Static<typeof CatalogSyncResult>;

export interface CatalogSyncLog {
  info(object: object, message: string): void;
}

const invalid = (details: ErrorDetail[]) => new AppError('validation_failed', 'request body is invalid', details.map((d) => ({ ...d, in: 'body' as const })));

/**
 * Declarative catalog sync (POST /v1/catalog/sync): a source declares every tool it publishes and
 * the registry creates, versions, leaves alone or (with prune) retires that source's tools to
 * match. Tools of other sources, and upstream tools, are never touched; a tool published tool by
 * tool (no source) is adopted when the sync declares it. docs/catalog-sync.md.
 */
export class CatalogSync {
  constructor(
    private readonly db: Db,
    private readonly tools: ToolService,
    private readonly validator: ToolValidator,
    /** The largest single tool document (BODY_LIMIT_BYTES, POST /v1/tools' own limit). */
    private readonly documentBytes: number,
    private readonly log: CatalogSyncLog,
  ) {}

  async sync(principal: Principal, input: CatalogSyncInput): Promise<CatalogSyncOutcome> {
    if (input.source.startsWith(RESERVED_SOURCE_PREFIX)) {
      throw invalid([{ pointer: '/source', message: `'${RESERVED_SOURCE_PREFIX}' sources belong to upstream MCP servers (POST /v1/upstreams)` }]);
    }
    const first = new Map<string, number>();
    const duplicates: ErrorDetail[] = [];
    input.tools.forEach((tool, i) => {
      const seen = first.get(tool.name);
      if (seen === undefined) first.set(tool.name, i);
      else duplicates.push({ pointer: `/tools/${i}/name`, message: `'${tool.name}' is declared twice (also /tools/${seen}/name)` });
    });
    if (duplicates.length > 0) throw invalid(duplicates);

    const wanted = input.tools.map((tool) => this.wanted(tool));
    const started = performance.now();
    const result = await reconcile(this.db, this.tools, principal, wanted, {
      source: input.source,
      prune: input.prune,
      dryRun: input.dry_run,
      refuse: (current) =>
        current.source === null || current.source === input.source ? undefined : `tool '${current.name}' belongs to source '${current.source}'; it was left alone`,
    });
    const outcome: CatalogSyncOutcome = {
      source: input.source,
      dry_run: input.dry_run,
      created: result.created,
      updated: result.updated,
      unchanged: result.unchanged,
      retired: result.retired,
      errors: result.errors.map((e) => ({ name: e.label, error: e.message, details: e.details.map(({ pointer, message }) => ({ pointer, message })) })),
    };
    this.log.info(
      {
        tenant: principal.tenant,
        source: input.source,
        dry_run: input.dry_run,
        created: outcome.created.length,
        updated: outcome.updated.length,
        unchanged: outcome.unchanged.length,
        retired: outcome.retired.length,
        errors: outcome.errors.length,
        ms: Math.round(performance.now() - started),
      },
      'catalog synced',
    );
    return outcome;
  }

  /** One declared tool: recognized by its content hash when unchanged, fully checked before any write. */
  private wanted(tool: { name: string }): WantedTool {
    const size = Buffer.byteLength(JSON.stringify(tool));
    const oversized = size > this.documentBytes;
    return {
      name: tool.name,
      label: tool.name,
      ...(oversized ? {} : { recognized: this.validator.recognize(tool) }),
      checked: (): ToolDocument => {
        if (oversized) throw new AppError('payload_too_large', `the tool document is ${size} bytes; one tool may have at most ${this.documentBytes} (BODY_LIMIT_BYTES)`);
        const result = this.validator.validate(tool);
        if (!result.ok) throw new AppError('validation_failed', 'tool document is invalid', result.issues);
        return result.document;
      },
    };
  }
}
