import { SingleBar } from 'cli-progress';

import { documentChanges, type RegistryClient, RegistryError, type ToolDocument } from '../client/index.js';
import type { LoadedDocument } from './documents.js';
import { renderTable } from './table.js';

export type PushAction = 'created' | 'updated' | 'unchanged' | 'failed' | 'would create' | 'would update';

/** What happened to one document. */
export interface PushOutcome {
  source: string;
  name: string;
  action: PushAction;
  version: string;
  detail: string;
}

export interface PushOptions {
  /** Compare only; change nothing. */
  dryRun?: boolean;
  /** Documents in flight at once (default 4). */
  concurrency?: number;
  /** Called after each document (progress bars). */
  onProgress?: (done: number, total: number) => void;
}

function describeError(error: unknown): string {
  if (error instanceof RegistryError) {
    const details = error.details.map((d) => `${d.pointer} ${d.message}`).join('; ');
    return `${error.status || ''} ${error.code}: ${error.message}${details ? ` [${details}]` : ''}`.trim();
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * Publishes one document idempotently: GET the current tool; POST when absent; skip when the
 * content is unchanged (canonical comparison); else PUT with If-Match on the ETag just read.
 * A PUT that returns the same revision (the service found nothing to change) counts as unchanged.
 */
export async function pushDocument(client: RegistryClient, doc: ToolDocument, options: PushOptions = {}): Promise<Omit<PushOutcome, 'source'>> {
  const base = { name: doc.name, version: String(doc.version) };
  const current = await client.findTool(doc.name);
  if (!current) {
    if (options.dryRun) return { ...base, action: 'would create', detail: '' };
    const created = await client.createTool(doc);
    return { ...base, action: 'created', detail: `revision ${created.tool.revision}` };
  }
  const changes = documentChanges(doc, current.tool);
  if (changes.length === 0) return { ...base, action: 'unchanged', detail: '' };
  const change = `${current.tool.version} -> ${doc.version} (${changes.join(', ')})`;
  if (options.dryRun) return { ...base, action: 'would update', detail: change };
  const updated = await client.updateTool(doc.name, doc, { ifMatch: current.etag });
  if (updated.tool.revision === current.tool.revision) return { ...base, action: 'unchanged', detail: 'no-op on the server' };
  return { ...base, action: 'updated', detail: change };
}

/** Pushes every loaded document (load errors and duplicate names fail); outcomes in input order. */
export async function pushAll(client: RegistryClient, loaded: LoadedDocument[], options: PushOptions = {}): Promise<PushOutcome[]> {
  const outcomes: PushOutcome[] = new Array(loaded.length);
  const firstSource = new Map<string, string>();
  let done = 0;
  let next = 0;
  const work = async () => {
    for (let i = next++; i < loaded.length; i = next++) {
      const item = loaded[i]!;
      const name = item.document?.name ?? '';
      const version = item.document?.version === undefined ? '' : String(item.document.version);
      if (!item.document) {
        outcomes[i] = { source: item.source, name, version, action: 'failed', detail: item.error ?? 'unreadable' };
      } else if (firstSource.has(name)) {
        outcomes[i] = { source: item.source, name, version, action: 'failed', detail: `duplicate name: also in ${firstSource.get(name)}` };
      } else {
        firstSource.set(name, item.source);
        try {
          outcomes[i] = { source: item.source, ...(await pushDocument(client, item.document, options)) };
        } catch (error) {
          outcomes[i] = { source: item.source, name, version, action: 'failed', detail: describeError(error) };
        }
      }
      done += 1;
      options.onProgress?.(done, loaded.length);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.concurrency ?? 4, loaded.length)) }, work));
  return outcomes;
}

/** The summary table and totals line printed at the end of a push. */
export function pushSummary(outcomes: PushOutcome[]): string {
  const table = renderTable(
    ['tool', 'version', 'result', 'detail', 'source'],
    outcomes.map((o) => [o.name || '-', o.version || '-', o.action, o.detail, o.source]),
    70,
  );
  const counts = new Map<PushAction, number>();
  for (const o of outcomes) counts.set(o.action, (counts.get(o.action) ?? 0) + 1);
  const order: PushAction[] = ['created', 'updated', 'unchanged', 'would create', 'would update', 'failed'];
  const totals = order.filter((a) => counts.has(a) || ['created', 'updated', 'unchanged', 'failed'].includes(a)).map((a) => `${a} ${counts.get(a) ?? 0}`);
  const failures = outcomes.filter((o) => o.action === 'failed').map((o) => `  ${o.name || '-'} (${o.source}): ${o.detail}`);
  return `${table}${failures.length > 0 ? `\nfailures:\n${failures.join('\n')}\n` : ''}\n${outcomes.length} documents: ${totals.join(', ')}\n`;
}

/** A progress bar on stderr for long runs on a terminal; a no-op otherwise. */
export function progressBar(enabled: boolean, total: number, stream: NodeJS.WritableStream = process.stderr): { update: (done: number) => void; stop: () => void } {
  if (!enabled) return { update: () => undefined, stop: () => undefined };
  const bar = new SingleBar({ format: 'pushing [{bar}] {value}/{total} tools | {duration_formatted}', stream, hideCursor: true, clearOnComplete: true });
  bar.start(total, 0);
  return { update: (done) => bar.update(done), stop: () => bar.stop() };
}
