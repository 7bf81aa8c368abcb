import type { FastifyBaseLogger } from 'fastify';

import type { Db } from '../db/client.js';
import { cardEmbeddingTexts } from './embedding-texts.js';
import { type Embedder, EmbeddingRefused } from './provider.js';
import {
  catalogSignature,
  databaseNow,
  type IndexCounts,
  indexCounts,
  recordFailures,
  type RefusalHold,
  refusalHoldEndsInMs,
  saveEmbeddings,
  type StaleTool,
  staleTools,
  staleToolsInTurns,
  storedVectors,
  textHash,
  textKey,
} from './repository.js';
import { IndexThroughput } from './throughput.js';
import { type BuildInProgress, ensureVectorIndex, type IndexBuild, largestCatalog } from './vector-index.js';

interface IndexerOptions {
  /** Tools embedded per embedder call batch. */
  batchSize: number;
  /** Delay before retrying after a failure, and the period of the safety sweep. */
  retryMs: number;
  /** How to build the model's HNSW index (concurrently on PostgreSQL; its session and memory). */
  indexBuild: IndexBuild;
  /**
   * Build the model's HNSW index once some tenant has this many active tools (discovery uses it
   * from there on): smaller catalogs never pay for maintaining it on every insert.
   */
  vectorIndexMinTools: number;
  /**
   * How long a tool whose texts the embedder refused (EmbeddingRefused) is left out of the passes
   * while its content stays the same (the same texts would be refused again); refusals recorded
   * before this indexer started do not count, so a restart tries every refused tool once.
   */
  refusedRetryMs: number;
}

/** How long a read of the index backlog serves scrapes and readiness probes. */
const BACKLOG_TTL_MS = 2_000;

export const DEFAULT_INDEXER_OPTIONS: Omit<IndexerOptions, 'indexBuild'> = { batchSize: 64, retryMs: 5_000, vectorIndexMinTools: 1000, refusedRetryMs: 3_600_000 };

/**
 * Keeps tool vectors current. Registration only notifies; the indexer embeds stale tools in
 * batches in the background, so a failing embedder never fails a publish. A periodic sweep
 * catches whatever was missed (failures, other replicas' writes, a new model).
 */
export class EmbeddingIndexer {
  private running: Promise<void> | undefined;
  private again = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private indexed = false;
  /** When a batch was last taken in turns across tenants (see sweep). */
  private lastInTurns = Number.NEGATIVE_INFINITY;
  /** The catalog signature at the start of the last pass that found nothing stale (see loop). */
  private quietAt: string | undefined;
  /** When (performance.now()) the first held-back refused tool comes due: a pass is due then, written to or not. */
  private quietUntil = Number.POSITIVE_INFINITY;
  /** The database's clock when the first pass began (see RefusalHold); read once. */
  private heldSince: string | undefined;
  /** Aborted on stop: encoder work not yet started is dropped, so shutdown does not wait for it. */
  private readonly stopping = new AbortController();
  /** 'ok', or the last failure while embedding. */
  status = 'ok';
  /** The HNSW index build under way, if any (readiness and the busy gate report it). */
  indexBuild: BuildInProgress | undefined;
  /** Tools and texts indexed, and the recent rate (metrics, readiness, sync progress). */
  readonly throughput = new IndexThroughput();
  private backlogCache: { at: number; counts: Promise<IndexCounts> } | undefined;

  constructor(
    private readonly db: Db,
    private readonly embedder: Embedder,
    private readonly log: Pick<FastifyBaseLogger, 'warn' | 'info'>,
    private readonly options: IndexerOptions,
  ) {}

  /** The model whose vectors this indexer maintains. */
  get model(): string {
    return this.embedder.model;
  }

  /** Starts the periodic sweep and runs one now. */
  start(): void {
    this.timer = setInterval(() => this.notify(), this.options.retryMs);
    this.timer.unref();
    this.notify();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    clearInterval(this.timer);
    await this.running;
  }

  /** Something changed: sweep soon (coalesces bursts of registrations into batches). */
  notify(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = undefined;
    });
  }

  /**
   * The service-wide index counts (every tenant), read at most once per BACKLOG_TTL_MS however
   * often /metrics and /readyz ask.
   */
  backlog(): Promise<IndexCounts> {
    const now = Date.now();
    if (!this.backlogCache || now - this.backlogCache.at > BACKLOG_TTL_MS) {
      const counts = indexCounts(this.db, this.embedder.model);
      // A failed read is not cached: the next scrape asks again.
      counts.catch(() => {
        if (this.backlogCache?.counts === counts) this.backlogCache = undefined;
      });
      this.backlogCache = { at: now, counts };
    }
    return this.backlogCache.counts;
  }

  /** Resolves once every active tool has current vectors (or the embedder failed). */
  async flush(): Promise<void> {
    this.notify();
    while (this.running) await this.running;
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      try {
        // Nothing written anywhere since a pass found nothing stale: nothing can be stale, and the
        // periodic sweep (every retryMs) costs one small read instead of a pass over every tool.
        const signature = await catalogSignature(this.db);
        if (signature !== this.quietAt || performance.now() >= this.quietUntil) {
          const done = await this.sweep();
          this.quietAt = done === 0 ? signature : undefined;
          // A refused tool held back comes due with no write anywhere: wake for it then.
          const dueInMs = done === 0 ? await refusalHoldEndsInMs(this.db, this.embedder.model, await this.refusalHold()) : undefined;
          this.quietUntil = dueInMs === undefined ? Number.POSITIVE_INFINITY : performance.now() + dueInMs;
        }
        // Once discovery would use it, make sure this model's HNSW index exists (once per process).
        if (!this.indexed && !this.stopped && (await largestCatalog(this.db)) >= this.options.vectorIndexMinTools) {
          // The build can take minutes (100,000 tools: ~75 s): first sweep once more what changed
          // behind the pass, such as a registration that committed after the pass went by its id.
          if (this.again) {
            this.again = false;
            await this.sweep();
          }
          this.indexed = await ensureVectorIndex(this.db, this.embedder.model, this.options.indexBuild, this.log, (progress) => {
            this.indexBuild = progress;
          });
        }
        this.status = 'ok';
      } catch (error) {
        this.quietAt = undefined;
        if (this.stopped) return; // work dropped by stop(), not a failure
        this.status = `failing: ${(error as Error).message}`;
        this.log.warn({ err: error }, 'embedding tools failed; discovery stays lexical for them until a retry succeeds');
        return;
      }
    } while (this.again && !this.stopped);
  }

  /**
   * One pass over the stale tools in id order, returning how many it did; a change made behind it
   * sets `again`. At most once per `retryMs` a batch is taken in turns across tenants instead, so
   * one tenant's import holds another tenant's new tool back by that long and one batch at most,
   * not for the whole import; the read of every stale tool that takes (122,300 tools: 0.2-0.4 s)
   * is then paid at most once per `retryMs`.
   */
  private async sweep(): Promise<number> {
    const { model } = this.embedder;
    let done = 0;
    for (let after = 0; !this.stopped; ) {
      const inTurns = performance.now() - this.lastInTurns >= this.options.retryMs;
      if (inTurns) this.lastInTurns = performance.now();
      const { batchSize } = this.options;
      const hold = await this.refusalHold();
      const batch = inTurns ? await staleToolsInTurns(this.db, model, batchSize, hold) : await staleTools(this.db, model, batchSize, after, hold);
      if (batch.length === 0) break;
      await this.embedBatch(batch);
      done += batch.length;
      if (!inTurns) after = batch.at(-1)!.id;
    }
    return done;
  }

  /** Which refusals hold their tools back from this indexer's passes. */
  private async refusalHold(): Promise<RefusalHold> {
    this.heldSince ??= await databaseNow(this.db);
    return { ms: this.options.refusedRetryMs, since: this.heldSince };
  }

  /**
   * Brings one batch of stale tools up to date. Only texts without a stored vector in the tool's
   * tenant are embedded: a new learned alias or an edited example costs one text, not the tool's
   * every text (learning must not let callers multiply the embedder's work), and a new version or
   * another tool with an unchanged text reuses the vector already stored for it.
   */
  private async embedBatch(batch: StaleTool[]): Promise<void> {
    const { model } = this.embedder;
    const started = performance.now();
    const texts = batch.map((tool) => cardEmbeddingTexts(tool).map((text) => ({ text, tenantId: tool.tenantId, textHash: textHash(text) })));
    const known = await storedVectors(this.db, model, texts.flat());
    const stored = (t: { tenantId: string; textHash: string }) => known.get(textKey(t.tenantId, t.textHash));
    const missing = [...new Set(texts.flat().filter((t) => !stored(t)).map((t) => t.text))];
    let computed: number[][] = [];
    try {
      if (missing.length > 0) computed = await this.embedder.embed(missing, { purpose: 'index', signal: this.stopping.signal });
    } catch (error) {
      // A stop is no failure.
      if (this.stopping.signal.aborted) throw error;
      const refused = error instanceof EmbeddingRefused;
      // Texts the embedder refuses (one too long for it) are looked for by halves, so that the
      // other tools of the batch, other tenants' among them, are embedded: failing the whole batch
      // failed every pass on the same batch, and no tenant's new tools got vectors again.
      if (refused && batch.length > 1) {
        const half = Math.ceil(batch.length / 2);
        await this.embedBatch(batch.slice(0, half));
        await this.embedBatch(batch.slice(half));
        return;
      }
      // Publishers see it as index_status "failed" until a retry succeeds.
      await recordFailures(this.db, batch, model, (error as Error).message, refused).catch(() => undefined);
      // A refused tool alone fails only itself: the pass goes on, and the passes after it leave the
      // tool out for refusedRetryMs unless it changes. Tried on every pass, a pass that did any
      // work being followed by another 5 s later, one tenant's refused tools kept the indexer and
      // a remote embedder busy for every tenant, for good.
      if (refused) return;
      throw error;
    }
    const fresh = new Map(missing.map((text, i) => [text, computed[i]!]));
    for (const [i, tool] of batch.entries()) {
      const vectors = texts[i]!.map((t) => ({ textHash: t.textHash, vector: stored(t) ?? fresh.get(t.text)! }));
      await saveEmbeddings(this.db, tool.id, model, tool.stamp, vectors);
    }
    this.throughput.record(batch.length, missing.length, performance.now() - started);
  }
}
