import type { Principal } from '../auth/principal.js';
import type { Db } from '../db/client.js';
import { AppError, type ErrorDetail } from '../errors.js';
import { contentHash } from '../tools/content-hash.js';
import type { ToolDocument } from '../tools/model.js';
import type { ToolService } from '../tools/service.js';
import { type HeldTool, heldTools, stampSource } from './repository.js';

/**
 * Bringing the tools one owner (a catalog sync source, an upstream MCP server) holds in a tenant in
 * line with the list it declares: the one add / change / unchanged / retire loop behind
 * POST /v1/catalog/sync and the upstream sync. Every write goes through the ToolService, so
 * validation, version rules, warnings, audit and indexing apply as for any publish.
 *
 * Per-tool outcome, not one transaction per sync: each tool is written in its own transaction
 * (the ToolService's); a tool the registry refuses is reported in `errors` and the others still
 * sync. A tool that failed keeps its previous version, and is never pruned (it was declared).
 */

/** A tool the owner declares. */
export interface WantedTool {
  /** The tool's name in the tenant. */
  name: string;
  /** What its errors are reported under (the owner's own name for it). */
  label: string;
  /**
   * The document as it would be stored, when known without the full checks: compared with the
   * stored content hash first, so an unchanged tool costs neither validation nor a write.
   */
  recognized?: ToolDocument;
  /**
   * The document to write, after every check: throws an AppError for an invalid one. `current`
   * is the tool the tenant holds under that name, if any.
   */
  checked(current: HeldTool | undefined): ToolDocument | Promise<ToolDocument>;
}

export interface ReconcileOptions {
  /** Stamped on every tool written or adopted (tools.source). */
  source: string;
  /** Retire the owner's active tools the list does not name. */
  prune: boolean;
  /** Run every check and write nothing: the outcome is the plan. */
  dryRun: boolean;
  /** Why this owner may not take over an existing tool, or undefined when it may (it owns or adopts it). */
  refuse(current: HeldTool): string | undefined;
  /** Runs before a taken tool is compared and written (not on a dry run): e.g. recording ownership elsewhere. */
  claim?(tool: WantedTool): Promise<void>;
}

export interface ReconcileError {
  label: string;
  message: string;
  details: ErrorDetail[];
}

/** What a sync did (or, on a dry run, would do), by tool name in the order declared; `retired` by name. */
export interface ReconcileOutcome {
  /** New tools, and retired ones brought back. */
  created: string[];
  updated: string[];
  unchanged: string[];
  retired: string[];
  errors: ReconcileError[];
}

/** Brings the owner's tools in `principal`'s tenant in line with `wanted` (names unique). */
export async function reconcile(db: Db, tools: ToolService, principal: Principal, wanted: readonly WantedTool[], options: ReconcileOptions): Promise<ReconcileOutcome> {
  const outcome: ReconcileOutcome = { created: [], updated: [], unchanged: [], retired: [], errors: [] };
  const held = await heldTools(db, principal.tenant);
  const adopted: string[] = [];
  for (const tool of wanted) {
    const current = held.get(tool.name);
    try {
      const result = await reconcileOne(tools, principal, tool, current, options);
      outcome[result].push(tool.name);
      // Identical content under another owner (none): claimed without a new version.
      if (result === 'unchanged' && current && current.source !== options.source) adopted.push(tool.name);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      outcome.errors.push({ label: tool.label, message: error.message, details: error.details });
    }
  }
  if (!options.dryRun && adopted.length > 0) await stampSource(db, principal.tenant, adopted, options.source);
  if (options.prune) {
    const declared = new Set(wanted.map((tool) => tool.name));
    const gone = [...held.values()].filter((tool) => tool.source === options.source && tool.status === 'active' && !declared.has(tool.name));
    for (const tool of gone.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (!options.dryRun) await tools.retire(principal, tool.name, undefined);
      outcome.retired.push(tool.name);
    }
  }
  return outcome;
}

async function reconcileOne(tools: ToolService, principal: Principal, tool: WantedTool, current: HeldTool | undefined, options: ReconcileOptions): Promise<'created' | 'updated' | 'unchanged'> {
  if (current) {
    const refusal = options.refuse(current);
    if (refusal !== undefined) throw new AppError('conflict', refusal, [{ pointer: '/name', message: refusal }]);
  }
  if (!options.dryRun) await options.claim?.(tool);
  const same = (document: ToolDocument) => current?.status === 'active' && contentHash(document) === current.contentHash;
  if (tool.recognized && same(tool.recognized)) return 'unchanged';
  const document = await tool.checked(current);
  if (same(document)) return 'unchanged';
  const write = { dryRun: options.dryRun, source: options.source };
  if (!current) {
    await tools.register(principal, document, write);
    return 'created';
  }
  const { outcome } = await tools.replace(principal, tool.name, document, undefined, write);
  return outcome === 'restored' ? 'created' : outcome === 'unchanged' ? 'unchanged' : 'updated';
}
