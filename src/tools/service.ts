import semver from 'semver';

import { appendAudit } from '../audit/repository.js';
import { isPublisher, type Principal } from '../auth/principal.js';
import type { Db, Executor, Tx } from '../db/client.js';
import { hasErrorCode } from '../db/connection-errors.js';
import { keysetPage } from '../db/keyset-page.js';
import type { ToolRow } from '../db/schema.js';
import { AppError, invalidInput, toolNotFound } from '../errors.js';
import { canSee, seenBy } from './access.js';
import { canonicalJson } from './canonical-json.js';
import { contentHash } from './content-hash.js';
import { refreshTerms } from './lexical/postings.js';
import { searchTexts } from './lexical/search-text.js';
import { TOOL_NAME_PATTERN, type ToolDocument } from './model.js';
import * as repo from './repository.js';
import { tokenCosts } from './tokens.js';
import { documentOf, etagOf } from './views.js';
import { MAX_WARNINGS, type ToolWarning, toolWarnings } from './warnings.js';

/** Called after a tool's content changed and the transaction committed (e.g. to embed it). */
type ToolChangeListener = (row: ToolRow) => void;

/**
 * Called inside the transaction of a new version, before its postings are rebuilt: derived text
 * owned elsewhere (learned aliases, whose ranking depends on sensitivity and side effects).
 */
type ToolRewriteHook = (tx: Tx, row: ToolRow) => Promise<void>;

/** The warning codes a tenant refuses (its settings), read inside the publish's transaction. */
type WarningsAsErrors = (executor: Executor, tenantId: string) => Promise<readonly string[]>;

interface WriteResult {
  row: ToolRow;
  etag: string;
  changed: boolean;
  /** What makes the published tool harder to find or call (none refused by the tenant's settings). */
  warnings: ToolWarning[];
}

/** What a write did, or would do on a dry run. */
export type WriteOutcome = 'created' | 'updated' | 'restored' | 'unchanged';

interface WriteOptions {
  /** Run every check and write inside a transaction that is rolled back: nothing is stored. */
  dryRun?: boolean;
  /** Stamps the tool with the catalog sync source that owns it (src/catalog); absent: left as it is. */
  source?: string;
}

/** Thrown at the end of a dry run's transaction to roll it back, carrying what would have been stored. */
class DryRunRollback extends Error {
  constructor(readonly row: ToolRow) {
    super('dry run');
  }
}

/**
 * Runs a write transaction, or on a dry run the same transaction rolled back at its end: every
 * check the real call makes (constraints and triggers included) runs, nothing is kept.
 */
async function writeTransaction<T extends { row: ToolRow }>(db: Db, dryRun: boolean, work: (tx: Tx) => Promise<T & { changed: boolean }>): Promise<T & { changed: boolean }> {
  if (!dryRun) return db.transaction(work);
  let result: (T & { changed: boolean }) | undefined;
  try {
    await db.transaction(async (tx) => {
      result = await work(tx);
      if (result.changed) throw new DryRunRollback(result.row);
    });
  } catch (error) {
    if (!(error instanceof DryRunRollback)) throw error;
  }
  return result!;
}

/** Top-level document fields in which `next` differs from the stored `current` (what a PUT changes). */
function changedFields(current: ToolDocument, next: ToolDocument): string[] {
  const fields = new Set([...Object.keys(current), ...Object.keys(next)]);
  return [...fields].filter((field) => canonicalJson((current as unknown as Record<string, unknown>)[field] ?? null) !== canonicalJson((next as unknown as Record<string, unknown>)[field] ?? null)).sort();
}

function columnsOf(doc: ToolDocument) {
  const texts = searchTexts(doc);
  return {
    version: doc.version,
    summary: doc.summary,
    description: doc.description,
    notFor: doc.not_for,
    aliases: doc.aliases,
    examples: doc.examples,
    tags: doc.tags,
    category: doc.category,
    requiredScopes: doc.required_scopes,
    sensitivity: doc.sensitivity,
    sideEffects: doc.side_effects,
    document: doc as unknown as Record<string, unknown>,
    contentHash: contentHash(doc),
    tokenCosts: tokenCosts(doc),
    searchName: texts.name,
    searchCard: texts.card,
    searchBody: texts.body,
    searchParams: texts.params,
  };
}

const UNIQUE_VIOLATION = new Set(['23505']);

/** The 409 for a name taken in the tenant, exactly or in canonical form, naming the tool that has it. */
function nameConflict(name: string, existing: string | undefined): AppError {
  if (existing === undefined || existing === name) return new AppError('conflict', `tool '${name}' already exists; use PUT /v1/tools/${name} to publish a new version`);
  return new AppError(
    'conflict',
    `tool name '${name}' is too close to the existing tool '${existing}': names are unique per tenant ignoring case, '-', '.', '_' and trailing separators`,
    [{ pointer: '/name', message: `conflicts with the existing tool '${existing}'` }],
  );
}

/** The most refused warnings one 400 lists (toolWarnings' own cap). */
const MAX_REFUSED = MAX_WARNINGS;

/**
 * The 400 for warnings the tenant asked to refuse, or undefined: each detail names the pointer and
 * the code, as `code: message`.
 */
async function refusedWarnings(executor: Executor, tenantId: string, doc: ToolDocument, asErrors: WarningsAsErrors): Promise<AppError | undefined> {
  const codes = await asErrors(executor, tenantId);
  if (codes.length === 0) return undefined;
  const refused = toolWarnings(doc, Number.POSITIVE_INFINITY).filter((w) => codes.includes(w.code));
  if (refused.length === 0) return undefined;
  return new AppError(
    'validation_failed',
    `tool has warnings this tenant treats as errors (warnings_as_errors: ${[...new Set(refused.map((w) => w.code))].join(', ')})`,
    refused.slice(0, MAX_REFUSED).map((w) => ({ pointer: w.pointer, message: `${w.code}: ${w.message}`, in: 'body' })),
  );
}

export interface ToolServiceOptions {
  /**
   * The primary as a tenant uses it, for its writes and a publisher's reads: its statements wait
   * for a connection in that tenant's turn (`Database.as`). Default: the primary as the service.
   */
  writesAs?: (tenant: string) => Db;
  /** Other callers' reads and every listing, as the tenant (the read replica when configured). Default: the primary. */
  readsAs?: (tenant: string) => Executor;
  /** Runs inside every publish transaction that writes a new row. */
  onRewrite?: ToolRewriteHook;
  /** The tenant's refused warning codes (settings own them). */
  warningsAsErrors?: WarningsAsErrors;
}

/** The registry's rules for publishing, reading and retiring tools. */
export class ToolService {
  private readonly listeners: ToolChangeListener[] = [];

  private readonly writesAs: (tenant: string) => Db;
  private readonly readsAs: (tenant: string) => Executor;
  private readonly onRewrite: ToolRewriteHook;
  private readonly warningsAsErrors: WarningsAsErrors;

  /** @param db the primary: writes, and a publisher's reads (read-your-own-write after a publish) */
  constructor(db: Db, options: ToolServiceOptions = {}) {
    this.writesAs = options.writesAs ?? (() => db);
    this.readsAs = options.readsAs ?? (() => db);
    this.onRewrite = options.onRewrite ?? (async () => undefined);
    this.warningsAsErrors = options.warningsAsErrors ?? (async () => []);
  }

  onChange(listener: ToolChangeListener): void {
    this.listeners.push(listener);
  }

  private notify(row: ToolRow): void {
    for (const listener of this.listeners) listener(row);
  }

  /** POST: registers a new tool; 409 when the name is taken in the tenant (even by a retired tool). */
  async register(principal: Principal, doc: ToolDocument, options: WriteOptions = {}): Promise<WriteResult> {
    let row: ToolRow;
    try {
      ({ row } = await writeTransaction(this.writesAs(principal.tenant), options.dryRun ?? false, async (tx) => {
        const clash = await repo.findNameClash(tx, principal.tenant, doc.name);
        if (clash !== undefined) throw nameConflict(doc.name, clash);
        const refused = await refusedWarnings(tx, principal.tenant, doc, this.warningsAsErrors);
        if (refused) throw refused;
        const inserted = await repo.insertTool(tx, {
          tenantId: principal.tenant,
          name: doc.name,
          revision: 1,
          status: 'active',
          createdBy: principal.subject,
          updatedBy: principal.subject,
          source: options.source ?? null,
          ...columnsOf(doc),
        });
        await repo.insertVersion(tx, inserted, principal.subject);
        await refreshTerms(tx, inserted.id);
        await appendAudit(tx, { tenantId: principal.tenant, actor: principal.subject, action: 'publish', toolName: doc.name, toolVersion: doc.version });
        return { row: inserted, changed: true };
      }));
    } catch (error) {
      // Two publishes racing past the check: the unique index decides; name the winner if it can be read.
      if (hasErrorCode(error, UNIQUE_VIOLATION)) throw nameConflict(doc.name, await repo.findNameClash(this.writesAs(principal.tenant), principal.tenant, doc.name).catch(() => undefined));
      throw error;
    }
    if (!options.dryRun) this.notify(row);
    return { row, etag: etagOf(row), changed: true, warnings: toolWarnings(doc) };
  }

  /**
   * PUT: publishes a new version. Identical content is a no-op; different content must carry a
   * higher semver, so a version always names one content. `ifMatch` gives optimistic concurrency.
   * A retired tool is restored by a PUT.
   */
  async replace(principal: Principal, name: string, doc: ToolDocument, ifMatch: string | undefined, options: WriteOptions = {}): Promise<WriteResult & { outcome: WriteOutcome; changes: string[] }> {
    const hash = contentHash(doc);
    const result = await writeTransaction<{ row: ToolRow; outcome: WriteOutcome; changes: string[] }>(this.writesAs(principal.tenant), options.dryRun ?? false, async (tx) => {
      const current = await repo.findTool(tx, principal.tenant, name, true);
      if (!current) throw toolNotFound(name);
      if (ifMatch !== undefined && !matchesEtag(ifMatch, etagOf(current))) {
        throw new AppError('precondition_failed', `If-Match does not match the current version of '${name}' (${etagOf(current)})`);
      }
      if (current.contentHash === hash && current.status === 'active') return { row: current, changed: false, outcome: 'unchanged', changes: [] };
      if (current.contentHash !== hash && !semver.gt(doc.version, current.version)) {
        throw new AppError('conflict', `version ${doc.version} must be greater than the current ${current.version} when the content changes`, [
          { pointer: '/version', message: `must be greater than ${current.version}` },
        ]);
      }
      // Only content that would be stored is held to the setting: an unchanged re-push stays a no-op.
      const refused = await refusedWarnings(tx, principal.tenant, doc, this.warningsAsErrors);
      if (refused) throw refused;
      const row = await repo.updateTool(tx, current.id, {
        ...columnsOf(doc),
        revision: current.revision + 1,
        status: 'active',
        updatedBy: principal.subject,
        ...(options.source === undefined ? {} : { source: options.source }),
      });
      if (current.contentHash !== hash) await repo.insertVersion(tx, row, principal.subject);
      await this.onRewrite(tx, row);
      // New text or scopes, or a restore: postings exist only for active tools.
      await refreshTerms(tx, row.id);
      const action = current.status === 'retired' ? 'restore' : 'publish';
      await appendAudit(tx, { tenantId: principal.tenant, actor: principal.subject, action, toolName: name, toolVersion: doc.version });
      const changes = changedFields(documentOf(current), doc);
      return { row, changed: true, outcome: current.status === 'retired' ? 'restored' : 'updated', changes: current.status === 'retired' ? [...changes, 'status'] : changes };
    });
    if (result.changed && !options.dryRun) this.notify(result.row);
    return { ...result, etag: etagOf(result.row), warnings: toolWarnings(doc) };
  }

  /** DELETE: retires a tool (kept in history, gone from discovery, denied by authorize). */
  async retire(principal: Principal, name: string, ifMatch: string | undefined): Promise<ToolRow> {
    const row = await this.writesAs(principal.tenant).transaction(async (tx) => {
      const current = await repo.findTool(tx, principal.tenant, name, true);
      if (!current) throw toolNotFound(name);
      if (ifMatch !== undefined && !matchesEtag(ifMatch, etagOf(current))) {
        throw new AppError('precondition_failed', `If-Match does not match the current version of '${name}' (${etagOf(current)})`);
      }
      if (current.status === 'retired') return current;
      const retired = await repo.updateTool(tx, current.id, { status: 'retired', revision: current.revision + 1, updatedBy: principal.subject });
      await refreshTerms(tx, retired.id);
      await appendAudit(tx, { tenantId: principal.tenant, actor: principal.subject, action: 'retire', toolName: name, toolVersion: current.version });
      return retired;
    });
    this.notify(row);
    return row;
  }

  /**
   * GET one: 404 unless the caller may see it (publishers see retired tools too). Publishers read
   * the primary, so the version they just published (and its ETag for If-Match) is what they get.
   * A name no tool can have is a 400, as the route's path schema answers (MCP describe_tool has no such schema).
   */
  async get(principal: Principal, name: string): Promise<ToolRow> {
    if (!TOOL_NAME.test(name)) throw invalidInput([{ pointer: '/name', message: `must match pattern "${TOOL_NAME_PATTERN}"`, in: 'params' }]);
    const row = await repo.findTool(isPublisher(principal) ? this.writesAs(principal.tenant) : this.readsAs(principal.tenant), principal.tenant, name);
    if (!row || !canSee(principal, row)) throw toolNotFound(name);
    return row;
  }

  /** A tool's version history (publishers only: it may show content the caller cannot use). */
  async history(principal: Principal, name: string): Promise<repo.ToolVersionRow[]> {
    const row = await this.get(principal, name);
    return repo.listVersions(this.writesAs(principal.tenant), row.id);
  }

  /** GET list: one page of visible tools after `cursor`. */
  async list(
    principal: Principal,
    options: { limit: number; cursor?: string; includeRetired: boolean; category?: string; tags?: string[] },
  ): Promise<{ rows: ToolRow[]; nextCursor: string | null }> {
    const rows = await repo.listTools(
      this.readsAs(principal.tenant),
      seenBy(principal, options.includeRetired),
      { limit: options.limit + 1, after: options.cursor === undefined ? undefined : decodeCursor(options.cursor), category: options.category, tags: options.tags },
    );
    const { rows: page, next } = keysetPage(rows, options.limit, (row) => encodeCursor(row.name));
    return { rows: page, nextCursor: next };
  }
}

const TOOL_NAME = new RegExp(TOOL_NAME_PATTERN);

function matchesEtag(header: string, etag: string): boolean {
  return header.split(',').some((candidate) => {
    const value = candidate.trim().replace(/^W\//, '');
    return value === '*' || value === etag;
  });
}

/** Opaque pagination cursor: the last name seen. */
export function encodeCursor(name: string): string {
  return Buffer.from(name, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): string {
  const name = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!TOOL_NAME.test(name)) {
    throw new AppError('validation_failed', 'invalid cursor', [{ pointer: '/cursor', message: 'is not a cursor returned by this API', in: 'querystring' }]);
  }
  return name;
}
