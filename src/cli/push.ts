import { SingleBar } from 'cli-progress';

import { type IndexStatus, type RegistryClient, RegistryError, type ToolDocument, type ToolWarning } from '../../clients/typescript/src/index.js';
import type { LoadedDocument } from './documents.js';
import { renderTable } from './table.js';

type PushAction =
  | 'created'
  | 'updated'
  | 'restored'
  | 'unchanged'
  | 'failed'
  | 'skipped'
  | 'would create'
  | 'would update'
  | 'would restore'
  | 'retired'
  | 'would retire';

/** What happened to one document. */
export interface PushOutcome {
  source: string;
  name: string;
  action: PushAction;
  version: string;
  detail: string;
  /** Top-level fields the push changed (or would change). */
  changes?: string[];
  /** The registry's error, when it refused the document. */
  error?: { status: number; code: string; message: string; details: { pointer: string; message: string }[] };
  /** After `--wait`: whether the pushed tool became searchable by meaning. */
  index_status?: IndexStatus;
  /** What was changed in the document before pushing, and why (import-mcp's repairs). */
  notes?: string[];
  /** The registry's warnings about the pushed tool (what makes it harder to find or call). */
  warnings?: ToolWarning[];
}

interface PushOptions {
  /** Ask the registry what would happen (its dry-run API); change nothing. */
  dryRun?: boolean;
  /** Documents in flight at once (default 4). */
  concurrency?: number;
  /** Called after each document (progress bars). */
  onProgress?: (done: number, total: number) => void;
}

/** Set when the registry refused the token: the remaining documents are not attempted. */
class AuthFailure {
  constructor(readonly error: RegistryError) {}
}

function describeError(error: unknown): string {
  if (error instanceof RegistryError) {
    const details = error.details.map((d) => `${d.pointer} ${d.message}`).join('; ');
    return `${error.status || ''} ${error.code}: ${error.message}${details ? ` [${details}]` : ''}`.trim();
  }
  return error instanceof Error ? error.message : String(error);
}

const WOULD: Record<'created' | 'updated' | 'restored', PushAction> = { created: 'would create', updated: 'would update', restored: 'would restore' };

/**
 * Publishes one document idempotently. GET the current tool: when absent, POST (or its dry run);
 * when present, ask the registry with a dry-run PUT (If-Match on the ETag just read) what a PUT
 * would do, so the registry's own rules (version, conflicts, validation) decide: unchanged stops
 * there, a dry run reports the plan, else the PUT follows with the same If-Match.
 */
async function pushDocument(client: RegistryClient, doc: ToolDocument, options: PushOptions = {}): Promise<Omit<PushOutcome, 'source'>> {
  const base = { name: doc.name, version: String(doc.version) };
  const warned = (warnings: ToolWarning[] | undefined) => (warnings && warnings.length > 0 ? { warnings } : {});
  const current = await client.findTool(doc.name);
  if (!current) {
    if (options.dryRun) {
      const plan = await client.dryRunCreate(doc);
      return { ...base, action: 'would create', detail: '', ...warned(plan.warnings) };
    }
    const created = await client.createTool(doc);
    return { ...base, action: 'created', detail: `revision ${created.tool.revision}`, ...warned(created.tool.warnings) };
  }
  const plan = await client.dryRunUpdate(doc.name, doc, { ifMatch: current.etag });
  if (plan.outcome === 'unchanged' || plan.outcome === 'created') return { ...base, action: 'unchanged', detail: '', ...warned(plan.warnings) };
  const detail = `${current.tool.version} -> ${doc.version} (${plan.changes.join(', ')})`;
  if (options.dryRun) return { ...base, action: WOULD[plan.outcome], detail, changes: plan.changes, ...warned(plan.warnings) };
  const updated = await client.updateTool(doc.name, doc, { ifMatch: current.etag });
  if (updated.tool.revision === current.tool.revision) return { ...base, action: 'unchanged', detail: 'no-op on the server', ...warned(updated.tool.warnings) };
  return { ...base, action: plan.outcome, detail, changes: plan.changes, ...warned(updated.tool.warnings) };
}

/**
 * Pushes every loaded document (load errors and duplicate names fail); outcomes in input order.
 * The first 401/403 stops the push: documents not yet started are `skipped`, and the result
 * carries the auth failure.
 */
export async function pushAll(client: RegistryClient, loaded: LoadedDocument[], options: PushOptions = {}): Promise<{ outcomes: PushOutcome[]; authFailure?: AuthFailure }> {
  const outcomes: PushOutcome[] = new Array(loaded.length);
  const firstSource = new Map<string, string>();
  let authFailure: AuthFailure | undefined;
  let done = 0;
  let next = 0;
  const work = async () => {
    for (let i = next++; i < loaded.length; i = next++) {
      const item = loaded[i]!;
      const name = item.document?.name ?? '';
      const version = item.document?.version === undefined ? '' : String(item.document.version);
      if (authFailure) {
        outcomes[i] = { source: item.source, name, version, action: 'skipped', detail: 'not attempted: the registry refused the token' };
      } else if (!item.document) {
        outcomes[i] = { source: item.source, name, version, action: 'failed', detail: item.error ?? 'unreadable' };
      } else if (firstSource.has(name)) {
        outcomes[i] = { source: item.source, name, version, action: 'failed', detail: `duplicate name: also in ${firstSource.get(name)}` };
      } else {
        firstSource.set(name, item.source);
        try {
          outcomes[i] = { source: item.source, ...(await pushDocument(client, item.document, options)) };
        } catch (error) {
          if (error instanceof RegistryError && error.auth) authFailure ??= new AuthFailure(error);
          outcomes[i] = {
            source: item.source,
            name,
            version,
            action: 'failed',
            detail: describeError(error),
            ...(error instanceof RegistryError ? { error: { status: error.status, code: error.code, message: error.message, details: error.details } } : {}),
          };
        }
      }
      if (item.notes && item.notes.length > 0) outcomes[i] = { ...outcomes[i]!, notes: item.notes };
      done += 1;
      options.onProgress?.(done, loaded.length);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 4, loaded.length)) }, work));
  return { outcomes, ...(authFailure ? { authFailure } : {}) };
}

/** Waits until every created, updated or restored tool is indexed (or failed, or the time is up). */
export async function waitForIndexing(client: RegistryClient, outcomes: PushOutcome[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const outcome of outcomes) {
    if (!['created', 'updated', 'restored'].includes(outcome.action)) continue;
    outcome.index_status = await client.waitForIndex(outcome.name, { timeoutMs: Math.max(0, deadline - Date.now()) });
  }
}

const ORDER: PushAction[] = ['created', 'updated', 'restored', 'unchanged', 'retired', 'would create', 'would update', 'would restore', 'would retire', 'failed', 'skipped'];
const ALWAYS: PushAction[] = ['created', 'updated', 'unchanged', 'failed'];

/** How many documents ended in each action (the always-shown ones even when zero). */
export function pushTotals(outcomes: PushOutcome[]): Partial<Record<PushAction, number>> {
  const counts = new Map<PushAction, number>();
  for (const o of outcomes) counts.set(o.action, (counts.get(o.action) ?? 0) + 1);
  return Object.fromEntries(ORDER.filter((a) => counts.has(a) || ALWAYS.includes(a)).map((a) => [a, counts.get(a) ?? 0]));
}

/** The summary table and totals line printed at the end of a push. */
export function pushSummary(outcomes: PushOutcome[]): string {
  const waited = outcomes.some((o) => o.index_status !== undefined);
  const table = renderTable(
    ['tool', 'version', 'result', ...(waited ? ['index'] : []), 'detail', 'source'],
    outcomes.map((o) => [o.name || '-', o.version || '-', o.action, ...(waited ? [o.index_status ?? '-'] : []), o.detail, o.source]),
    70,
  );
  const totals = Object.entries(pushTotals(outcomes)).map(([action, count]) => `${action} ${count}`);
  const failures = outcomes.filter((o) => o.action === 'failed').map((o) => `  ${o.name || '-'} (${o.source}): ${o.detail}`);
  return `${table}${failures.length > 0 ? `\nfailures:\n${failures.join('\n')}\n` : ''}\n${outcomes.length} documents: ${totals.join(', ')}\n`;
}

/** One stderr line per warning: tool, pointer, message (stdout keeps the table or the JSON). */
export function warningLines(outcomes: Pick<PushOutcome, 'name' | 'warnings'>[]): string {
  return outcomes.flatMap((o) => (o.warnings ?? []).map((w) => `warning: ${o.name} ${w.pointer}: ${w.message}\n`)).join('');
}

/** A progress bar on stderr for long runs on a terminal; a no-op otherwise. */
export function progressBar(enabled: boolean, total: number, stream: NodeJS.WritableStream = process.stderr): { update: (done: number) => void; stop: () => void } {
  if (!enabled) return { update: () => undefined, stop: () => undefined };
  const bar = new SingleBar({ format: 'pushing [{bar}] {value}/{total} tools | {duration_formatted}', stream, hideCursor: true, clearOnComplete: true });
  bar.start(total, 0);
  return { update: (done) => bar.update(done), stop: () => bar.stop() };
}
