import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

import type { RankingMode } from '../discovery/fusion.js';
import type { DiscoveryLogStats } from '../discovery/log-writer.js';
import type { VectorSearchOutcome } from '../discovery/repository.js';
import type { StageTimings } from '../discovery/service.js';
import type { ShortlistCacheStats } from '../discovery/shortlist-cache.js';
import type { ShortlistQualityStats } from '../discovery/shortlist-quality.js';
import type { EncoderCounters } from '../embedding/provider.js';
import type { QueryEmbeddingStats } from '../embedding/query-cache.js';
import type { CatalogSize } from '../tools/catalog-size.js';
import type { CallOutcome } from '../upstreams/call.js';

/** What pool gauges read: node-postgres pool counters (PGlite has no pool). */
interface PoolCounters {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

/** What the read-replica collectors read (src/db/read-replica.ts). */
interface ReadReplicaStatus {
  readonly counts: { readonly replica: number; readonly primary: number; readonly fellBack: number };
  readonly state: string;
  readonly lagMs: number | undefined;
}

/** What the indexing collectors read (src/embedding/indexer.ts): a cached backlog count and live totals. */
export interface IndexingStats {
  backlog(): Promise<{ pending: number; failed: number }>;
  readonly throughput: { readonly tools: number; readonly texts: number; readonly textsPerSecond: number | undefined; etaSeconds(pending: number): number | undefined };
}

/** Outcome of one execution-time authorization, as the gateway was told. */
type AuthorizeOutcome = 'allow' | 'deny';

// A scrape reads the catalog's size at most this often (every replica is scraped; the count reads every tool row).
const CATALOG_SIZE_MAX_AGE_MS = 15_000;

// Buckets in seconds: sub-millisecond resolution where /discover lives, up to the request timeout.
const LATENCY_BUCKETS = [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30];

/**
 * The service's Prometheus metrics on a registry of its own (never the global default, so many
 * apps in one process, as in tests, do not clash). Collectors that read live counters (query
 * embedding cache, pool) are registered by the parts that own them.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  readonly discoveryStage: Histogram<'stage' | 'search_mode'>;
  readonly authorizeDecisions: Counter<'decision' | 'reason'>;
  readonly upstreamCalls: Histogram<'outcome'>;
  readonly vectorSearches: Counter<'strategy'>;

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'tool_registry_' });
    this.httpDuration = new Histogram({
      name: 'tool_registry_http_request_duration_seconds',
      help: 'HTTP request duration by route template, method and status code',
      labelNames: ['method', 'route', 'status_code'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.discoveryStage = new Histogram({
      name: 'tool_registry_discovery_stage_seconds',
      help: 'Time per stage of POST /v1/discover (auth, cache, embedding, stats, lexical, vector, retrieval, fusion, fetch, rendering, log, total; embedding runs alongside stats and lexical, retrieval spans lexical to vector; a shortlist-cache hit has only auth, cache, log and total)',
      labelNames: ['stage', 'search_mode'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
    this.vectorSearches = new Counter({
      name: 'tool_registry_discovery_vector_search_total',
      help: 'Vector legs of discovery by strategy: exact, index (HNSW), index_fallback (index scan came back short, exact search ran)',
      labelNames: ['strategy'],
      registers: [this.registry],
    });
    this.authorizeDecisions = new Counter({
      name: 'tool_registry_authorize_decisions_total',
      help: 'Execution-time authorization decisions by outcome (and first reason code for denials)',
      labelNames: ['decision', 'reason'],
      registers: [this.registry],
    });
    this.upstreamCalls = new Histogram({
      name: 'tool_registry_upstream_call_seconds',
      help: 'Calls through the registry to upstream MCP servers (POST /v1/call, MCP call_tool) by outcome: ok, tool_error (the tool answered isError), failed (upstream unreachable, timed out or refused), cancelled (the caller went away first)',
      labelNames: ['outcome'],
      buckets: LATENCY_BUCKETS,
      registers: [this.registry],
    });
  }

  /** Times one call forwarded to an upstream MCP server. */
  recordUpstreamCall(outcome: CallOutcome, seconds: number): void {
    this.upstreamCalls.observe({ outcome }, seconds);
  }

  /** Records the stage split of one discovery (DiscoveryService's onTimings callback). */
  observeDiscovery(timings: StageTimings, mode: RankingMode, vectorSearch?: VectorSearchOutcome): void {
    for (const [stage, ms] of Object.entries(timings)) {
      if (typeof ms === 'number') this.discoveryStage.observe({ stage, search_mode: mode }, ms / 1000);
    }
    if (vectorSearch) this.vectorSearches.inc({ strategy: vectorSearch });
  }

  /** Records the authentication stage of a discovery request (token verification). */
  observeDiscoveryAuth(ms: number): void {
    this.discoveryStage.observe({ stage: 'auth', search_mode: 'any' }, ms / 1000);
  }

  /**
   * Counts one /v1/authorize decision. Call it once per answered request with the decision sent to
   * the gateway and, for a denial, a short stable reason code (e.g. 'scope_missing'); keep reason
   * codes few (they are a label).
   */
  recordAuthorizeDecision(decision: AuthorizeOutcome, reason = ''): void {
    this.authorizeDecisions.inc({ decision, reason: decision === 'allow' ? '' : reason });
  }

  /** A counter per `label` value, read from live totals at each scrape (the totals only grow). */
  private liveCounter(name: string, help: string, label: string, totals: () => Record<string, number>): void {
    new Counter({
      name,
      help,
      labelNames: [label],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [value, n] of Object.entries(totals())) this.inc({ [label]: value }, n);
      },
    });
  }

  /** Exposes the query-embedding cache and embedder failures from the cache's live counters. */
  trackQueryEmbeddings(stats: QueryEmbeddingStats): void {
    const registry = this.registry;
    this.liveCounter('tool_registry_query_embedding_cache_total', 'Query embedding lookups by result: hit (cached), miss (computed)', 'result', () => ({
      hit: stats.hits,
      miss: stats.misses,
    }));
    new Counter({
      name: 'tool_registry_embedder_failures_total',
      help: 'Query embeddings that failed or timed out (discovery fell back to lexical)',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(stats.failures);
      },
    });
  }

  /** Exposes empty and low-confidence shortlists (and all answered ones) per search mode. */
  trackShortlistQuality(stats: ShortlistQualityStats): void {
    const per = (pick: (counts: ShortlistQualityStats[keyof ShortlistQualityStats]) => number) => () =>
      Object.fromEntries(Object.entries(stats).map(([mode, counts]) => [mode, pick(counts)]));
    this.liveCounter('tool_registry_discovery_shortlists_total', 'Answered discoveries (REST and MCP, shortlist-cache hits included) by search mode', 'search_mode', per((c) => c.total));
    this.liveCounter('tool_registry_discovery_empty_shortlists_total', 'Discoveries that returned no tool (every candidate under DISCOVERY_MIN_SCORE, or none visible), by search mode', 'search_mode', per((c) => c.empty));
    this.liveCounter('tool_registry_discovery_low_confidence_shortlists_total', 'Discoveries answered with low_confidence: true (best score under DISCOVERY_LOW_CONFIDENCE_SCORE; empty ones included), by search mode', 'search_mode', per((c) => c.lowConfidence));
  }

  /**
   * Exposes the catalog's size across tenants: tools by status, tenants by bounded size bucket, scope
   * sets. Read from the database at most every CATALOG_SIZE_MAX_AGE_MS; a failed read keeps the last
   * values, so /metrics still answers while the database does not.
   */
  trackCatalogSize(read: () => Promise<CatalogSize>): void {
    let last: { at: number; size: CatalogSize } | undefined;
    let pending: Promise<CatalogSize | undefined> | undefined;
    const current = async (): Promise<CatalogSize | undefined> => {
      if (last && Date.now() - last.at < CATALOG_SIZE_MAX_AGE_MS) return last.size;
      // The three gauges of one scrape share one statement.
      pending ??= read().then(
        (size) => (last = { at: Date.now(), size }).size,
        () => last?.size,
      ).finally(() => (pending = undefined));
      return pending;
    };
    new Gauge({
      name: 'tool_registry_catalog_tools',
      help: 'Tools stored across every tenant, by status (active, retired)',
      labelNames: ['status'],
      registers: [this.registry],
      async collect() {
        const size = await current();
        if (!size) return;
        this.set({ status: 'active' }, size.tools.active);
        this.set({ status: 'retired' }, size.tools.retired);
      },
    });
    new Gauge({
      name: 'tool_registry_catalog_tenants',
      help: 'Tenants by how many active tools their catalog holds (bounded buckets: 0, 1-10, 11-100, 101-1000, 1001-10000, 10001+)',
      labelNames: ['size'],
      registers: [this.registry],
      async collect() {
        const size = await current();
        if (!size) return;
        for (const [bucket, n] of Object.entries(size.tenants)) this.set({ size: bucket }, n);
      },
    });
    new Gauge({
      name: 'tool_registry_catalog_scope_sets',
      help: 'Distinct required-scope sets published across tenants (discovery checks a caller against its tenant\'s sets)',
      registers: [this.registry],
      async collect() {
        const size = await current();
        if (size) this.set(size.scopeSets);
      },
    });
  }

  /** Exposes the shortlist cache's hits and misses from its live counters. */
  trackShortlistCache(stats: ShortlistCacheStats): void {
    this.liveCounter(
      'tool_registry_shortlist_cache_total',
      'Discoveries by shortlist-cache result: hit (answered from the cache at the current catalog revision), miss (computed)',
      'result',
      () => ({ hit: stats.hits, miss: stats.misses }),
    );
  }

  /** Exposes where replica-eligible reads went, and the replica's state and lag (DATABASE_READ_URL). */
  trackReadReplica(replica: ReadReplicaStatus): void {
    this.liveCounter('tool_registry_db_reads_total', 'Replica-eligible reads by the pool that answered (fell_back: failed on the replica, answered by the primary)', 'pool', () => ({
      replica: replica.counts.replica,
      primary: replica.counts.primary,
      fell_back: replica.counts.fellBack,
    }));
    new Gauge({
      name: 'tool_registry_read_replica_usable',
      help: '1 while reads go to the read replica, 0 while the primary serves them',
      registers: [this.registry],
      collect() {
        this.set(replica.state === 'ok' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'tool_registry_read_replica_lag_seconds',
      help: 'Upper bound of the read replica\'s replication lag at the last check (NaN when unknown)',
      registers: [this.registry],
      collect() {
        this.set(replica.lagMs === undefined ? Number.NaN : replica.lagMs / 1000);
      },
    });
  }

  /** Exposes an in-process encoder's work: texts encoded and jobs waiting, per purpose (query, index). */
  trackEncoder(counters: () => EncoderCounters): void {
    this.liveCounter('tool_registry_encoder_texts_total', 'Texts the in-process encoder embedded, by purpose (query, index)', 'purpose', () => counters().encoded);
    new Gauge({
      name: 'tool_registry_encoder_queue',
      help: 'Encoder jobs waiting or running, by purpose (query, index)',
      labelNames: ['purpose'],
      registers: [this.registry],
      collect() {
        const { queued } = counters();
        for (const [purpose, n] of Object.entries(queued)) this.set({ purpose }, n);
      },
    });
  }

  /** Exposes the batched discovery log: entries written, dropped (buffer full), refused, buffered, failed flushes. */
  trackDiscoveryLog(stats: DiscoveryLogStats): void {
    this.liveCounter('tool_registry_discovery_log_entries_total', 'Discovery log entries by outcome: written, dropped (buffer full or a write failed with the buffer full), refused (the database refused the entry itself)', 'outcome', () => ({
      written: stats.written,
      dropped: stats.dropped,
      refused: stats.refused,
    }));
    new Counter({
      name: 'tool_registry_discovery_log_failed_flushes_total',
      help: 'Batched discovery log writes that failed (their entries are retried while the buffer has room)',
      registers: [this.registry],
      collect() {
        this.reset();
        this.inc(stats.failedFlushes);
      },
    });
    new Gauge({
      name: 'tool_registry_discovery_log_buffered',
      help: 'Discovery log entries waiting to be written',
      registers: [this.registry],
      collect() {
        this.set(stats.buffered);
      },
    });
  }

  /**
   * Exposes vector indexing: the service-wide backlog (active tools waiting for vectors, or whose
   * last attempt failed), tools and texts indexed, the recent rate and the backlog's ETA. Labels are
   * fixed (state: pending, failed): no tenant or tool ever becomes a label.
   */
  trackIndexing(indexing: IndexingStats): void {
    const registry = [this.registry];
    const { throughput } = indexing;
    new Gauge({
      name: 'tool_registry_index_backlog_tools',
      help: 'Active tools without current vectors, by state: pending (waiting for the indexer), failed (last attempt failed; retried)',
      labelNames: ['state'],
      registers: registry,
      async collect() {
        const backlog = await indexing.backlog();
        this.set({ state: 'pending' }, backlog.pending);
        this.set({ state: 'failed' }, backlog.failed);
      },
    });
    new Gauge({
      name: 'tool_registry_index_eta_seconds',
      help: 'Seconds until the pending backlog is indexed at the recent rate (0: nothing pending; NaN: rate unknown yet)',
      registers: registry,
      async collect() {
        this.set(throughput.etaSeconds((await indexing.backlog()).pending) ?? Number.NaN);
      },
    });
    new Gauge({
      name: 'tool_registry_index_texts_per_second',
      help: 'Texts the indexer encoded per second of indexing over its last batches (NaN before the first)',
      registers: registry,
      collect() {
        this.set(throughput.textsPerSecond ?? Number.NaN);
      },
    });
    for (const [name, help, total] of [
      ['tool_registry_index_tools_total', 'Tools whose vectors the indexer stored', () => throughput.tools],
      ['tool_registry_index_texts_total', 'Texts the indexer encoded (texts with a current vector are reused, not counted)', () => throughput.texts],
    ] as const) {
      new Counter({
        name,
        help,
        registers: registry,
        collect() {
          this.reset();
          this.inc(total());
        },
      });
    }
  }

  /** Exposes database pool usage (node-postgres); PGlite is a single in-process connection. */
  trackPool(pool: PoolCounters): void {
    new Gauge({
      name: 'tool_registry_db_pool_connections',
      help: 'Database pool connections by state (total, idle, waiting clients)',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        this.set({ state: 'total' }, pool.totalCount);
        this.set({ state: 'idle' }, pool.idleCount);
        this.set({ state: 'waiting' }, pool.waitingCount);
      },
    });
  }
}
