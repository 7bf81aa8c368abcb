import type { CatalogSyncResult, IndexProgress, RegistryClient, ToolDocument } from '../../clients/typescript/src/index.js';
import type { LoadedDocument } from './documents.js';
import type { PushOutcome } from './push.js';

/**
 * `push --source NAME`: the whole folder is one declaration (POST /v1/catalog/sync), so a file
 * that cannot be read stops the push before anything is sent (with --prune, its tools would
 * otherwise be retired). Undefined when every document loaded, else the outcomes to report.
 */
export function unreadable(loaded: LoadedDocument[]): PushOutcome[] | undefined {
  const first = new Map<string, string>();
  const problems = loaded.flatMap((item): PushOutcome[] => {
    const name = item.document?.name ?? '';
    const version = item.document?.version === undefined ? '' : String(item.document.version);
    if (!item.document) return [{ source: item.source, name, version, action: 'failed', detail: item.error ?? 'unreadable' }];
    const seen = first.get(name);
    if (seen !== undefined) return [{ source: item.source, name, version, action: 'failed', detail: `duplicate name: also in ${seen}` }];
    first.set(name, item.source);
    return [];
  });
  return problems.length > 0 ? problems : undefined;
}

/** The documents of a fully loaded folder, in load order. */
export const documentsOf = (loaded: LoadedDocument[]): ToolDocument[] => loaded.map((item) => item.document!);

/** The sync's answer as one outcome per tool (the push table), retired tools included. */
export function syncOutcomes(result: CatalogSyncResult, loaded: LoadedDocument[]): PushOutcome[] {
  const byName = new Map(loaded.map((item) => [item.document!.name, item]));
  const dry = result.dry_run;
  const row = (name: string, action: PushOutcome['action'], detail = ''): PushOutcome => {
    const item = byName.get(name);
    return { source: item?.source ?? `(registry, source ${result.source})`, name, version: item ? String(item.document!.version) : '', action, detail };
  };
  const errors = new Map(result.errors.map((e) => [e.name, e]));
  return [
    ...result.created.map((name) => row(name, dry ? 'would create' : 'created')),
    ...result.updated.map((name) => row(name, dry ? 'would update' : 'updated')),
    ...result.unchanged.map((name) => row(name, 'unchanged')),
    ...result.retired.map((name) => row(name, dry ? 'would retire' : 'retired', `absent from source ${result.source}`)),
    ...[...errors.values()].map((e) => ({
      ...row(e.name, 'failed', [e.error, ...e.details.map((d) => `${d.pointer} ${d.message}`)].join('; ')),
      error: { status: 0, code: 'refused', message: e.error, details: e.details.map(({ pointer, message }) => ({ pointer, message })) },
    })),
  ];
}

const duration = (seconds: number): string => (seconds < 90 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`);

/** One line of indexing progress: counts, rate and ETA. */
export function progressLine(progress: IndexProgress): string {
  if (progress.model === null) return `indexing: no embedder; ${progress.active} tools are searchable lexically at once`;
  const rate = progress.texts_per_second === null ? 'rate not measured yet' : `${progress.texts_per_second} texts/s`;
  const eta = progress.pending === 0 ? 'done' : progress.eta_seconds === null ? 'ETA unknown' : `ETA ${duration(progress.eta_seconds)}`;
  // The service-wide backlog (read at most every 2 s) matters only while these tools wait in it.
  const backlog = progress.pending > 0 && progress.backlog > progress.pending ? ` (service backlog ${progress.backlog})` : '';
  return `indexing: ${progress.indexed}/${progress.active} indexed, ${progress.pending} pending${backlog}, ${progress.failed} failed · ${rate} · ${eta}`;
}

/** How often a non-interactive `--wait` prints a progress line (a terminal sees every poll). */
const LOG_EVERY_MS = 10_000;

/**
 * Waits until no tool of `source` waits for vectors, printing progress: in place on a terminal,
 * a line every 10 s otherwise (CI logs), and the final line. Resolves with the last progress.
 */
export async function waitForSync(client: RegistryClient, source: string, options: { timeoutMs: number; interactive: boolean; write: (text: string) => void }): Promise<IndexProgress> {
  let printed = 0;
  const last = await client.waitForCatalogIndex(source, {
    timeoutMs: options.timeoutMs,
    intervalMs: 1_000,
    onProgress: (progress) => {
      if (options.interactive) options.write(`\r\u001b[2K${progressLine(progress)}`);
      else if (Date.now() - printed >= LOG_EVERY_MS && progress.pending > 0) {
        options.write(`${progressLine(progress)}\n`);
        printed = Date.now();
      }
    },
  });
  options.write(`${options.interactive ? '\r\u001b[2K' : ''}${progressLine(last)}\n`);
  return last;
}
