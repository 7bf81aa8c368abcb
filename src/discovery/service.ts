import { randomUUID } from 'node:crypto';

import type { Principal } from '../auth/principal.js';
import type { Db, Executor } from '../db/client.js';
import type { QueryEmbeddings } from '../embedding/query-cache.js';
import { invalidInput } from '../errors.js';
import { inSpan, startStage } from '../telemetry/tracer.js';
import { usableBy } from '../tools/access.js';
import type { Format } from '../tools/formats.js';
import { renderForModel } from '../tools/formats.js';
import { BM25_PARAMS } from '../tools/lexical/bm25f.js';
import { tokensOf } from '../tools/tokens.js';
import { documentOf, toCard } from '../tools/views.js';
import type { CatalogStatsCache } from './catalog-cache.js';
import { catalogRevision } from './catalog-revision.js';
import { fuse, FUSION_PARAMS, type FusionParams, mergeRankings, type Ranking, type RankingMode } from './fusion.js';
import type { DiscoveryLogEntry } from './log-repository.js';
import { discoverInputProblems, type PreparedQuery, prepareQuery } from './query.js';
import { lexicalCandidates, type LexicalRequest, retrieveCandidates, shortlistRows, vectorCandidates, type VectorSearchOutcome } from './repository.js';
import type { DiscoveredTool, DiscoverInput, DiscoverResult } from './schemas.js';
import { type CachedShortlist, ShortlistCache } from './shortlist-cache.js';

/**
 * Milliseconds spent per stage of computing a shortlist (a cache miss). The query embedding runs
 * alongside the statistics and the lexical leg, so the stages add up to more than the total.
 */
interface ComputeTimings {
  /** Query embedding of the request and its steps (cache lookup, or the embedder call on a miss). */
  embedding: number;
  /** Catalog statistics for BM25 and token accounting (cached per tenant and scope set). */
  stats: number;
  /** The lexical leg (BM25F), its own statement, run while the query is embedded (absent when it ran with the vector leg). */
  lexical?: number;
  /** The vector leg once the query vector (and the lexical top, if run apart) is there; both legs when run as one statement; 0 without a vector. */
  vector: number;
  /** From the statistics to every candidate: the lexical leg, any wait for the embedding, the vector leg. */
  retrieval: number;
  fusion: number;
  /** Reading the shortlist's full rows. */
  fetch: number;
  /** Cards and schemas in the requested format. */
  rendering: number;
}

/** Milliseconds spent per stage of one discovery (for metrics and the log); a cache hit has no compute stages. */
export interface StageTimings extends Partial<ComputeTimings> {
  /** The catalog revision read and the shortlist-cache lookup. */
  cache: number;
  /** Queueing the discovery log entry (written in batches off the request path). */
  log: number;
  total: number;
}

/** Where discovery log entries go (DiscoveryLogWriter: batched, off the request path). */
export interface DiscoveryLogSink {
  append(entry: DiscoveryLogEntry): void;
}

export interface DiscoveryOptions {
  /** Receives one entry per discovery. */
  log: DiscoveryLogSink;
  /** Callers seeing at least this many tools are searched through the HNSW index; fewer, exactly. */
  vectorIndexMinTools?: number;
  /**
   * Where retrieval reads, as the caller's tenant (the read replica when configured; its
   * statements wait for a connection in the tenant's turn); the discovery log is always written to
   * `db`. Default: `db` for every tenant.
   */
  readsAs?: (tenant: string) => Executor;
  /** Score floors (calibrated probabilities); FUSION_PARAMS' defaults when absent. */
  scoreFloors?: Pick<FusionParams, 'minScore' | 'lowConfidenceScore'>;
  /** Whole shortlists per (tenant, scope set, request) and catalog revision; none when absent. */
  shortlists?: ShortlistCache;
  /** Receives each discovery's per-stage timings (metrics). */
  onTimings?: (timings: StageTimings, mode: RankingMode, vectorSearch: VectorSearchOutcome | undefined) => void;
}

/** A shortlist computed on a cache miss, with how it was found. */
interface Computed {
  shortlist: CachedShortlist;
  timings: ComputeTimings;
  vectorSearch: VectorSearchOutcome | undefined;
  /** A vector was wanted and the embedder gave none: ranked lexically instead. */
  degraded: boolean;
}

/** `promise`'s value and the milliseconds until it settled. */
async function timed<T>(promise: Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await promise;
  return { value, ms: performance.now() - started };
}

/** How many candidates each retrieval leg contributes to fusion. */
export const CANDIDATE_DEPTH = 100;

/**
 * Discovery: the caller's scopes filter every query inside SQL; both legs rank the rest; the
 * fused shortlist comes back with full schemas in the requested format.
 */
export class DiscoveryService {
  private readonly vectorIndexMinTools: number;
  private readonly readsAs: (tenant: string) => Executor;
  private readonly fusion: FusionParams;
  private readonly onTimings: NonNullable<DiscoveryOptions['onTimings']>;
  private readonly log: DiscoveryLogSink;
  private readonly shortlists: ShortlistCache;

  constructor(
    db: Db,
    private readonly embeddings: QueryEmbeddings | undefined,
    private readonly stats: CatalogStatsCache,
    options: DiscoveryOptions,
  ) {
    this.log = options.log;
    this.vectorIndexMinTools = options.vectorIndexMinTools ?? 1000;
    this.readsAs = options.readsAs ?? (() => db);
    this.fusion = { ...FUSION_PARAMS, ...options.scoreFloors };
    this.onTimings = options.onTimings ?? (() => undefined);
    this.shortlists = options.shortlists ?? new ShortlistCache({ maxBytes: 0, ttlMs: 0 });
  }

  /** Discovers for `principal`; refuses (400) a request discoverInputProblems finds fault with, whichever door it came through. */
  async discover(principal: Principal, input: DiscoverInput): Promise<DiscoverResult> {
    const problems = discoverInputProblems(input);
    if (problems.length > 0) throw invalidInput(problems);
    const started = performance.now();
    const query = prepareQuery(input.query);
    // One primary-key read: both caches serve only at the revision it names.
    const reads = this.readsAs(principal.tenant);
    const revision = await catalogRevision(reads, principal.tenant);
    const revised = performance.now();
    const { shortlist, computed } = await this.shortlists.resolve(
      ShortlistCache.key(principal, input, query.text),
      revision,
      () => this.compute(reads, principal, input, query, revision),
      // A degraded answer (no query vector) is not what the next caller should get once the embedder is back.
      (fresh) => !fresh.degraded,
    );
    const looked = performance.now();
    const result: DiscoverResult = {
      discovery_id: randomUUID(),
      tools: [...shortlist.tools],
      tokens: { shortlist: shortlist.shortlistTokens, catalog: shortlist.catalogTokens },
      low_confidence: shortlist.lowConfidence,
      search_mode: shortlist.searchMode,
      searched_query: query.searched,
    };
    const rendered = performance.now();

    this.log.append({
      id: result.discovery_id,
      at: new Date(),
      tenantId: principal.tenant,
      subject: principal.subject,
      query: query.text,
      topK: input.top_k,
      format: input.format,
      filters: input.filters ? { ...input.filters } : null,
      shortlist: result.tools.map((t) => ({ name: t.name, version: t.version, score: t.score })),
      searchMode: shortlist.searchMode,
      lowConfidence: shortlist.lowConfidence,
      topScore: result.tools[0]?.score ?? null,
      withheld: shortlist.withheld,
      latencyMs: rendered - started,
    });
    const logged = performance.now();
    this.onTimings({ ...computed?.timings, cache: (computed ? revised : looked) - started, log: logged - rendered, total: logged - started }, shortlist.searchMode, computed?.vectorSearch);
    return result;
  }

  /** Computes a shortlist: embedding, statistics, retrieval, fusion, rows and rendering. */
  private async compute(
    reads: Executor,
    principal: Principal,
    input: DiscoverInput,
    query: PreparedQuery,
    revision: number,
  ): Promise<Computed> {
    const started = performance.now();
    const visibility = usableBy(principal);
    // hybrid degrades to lexical when no query vector can be had
    const requested = input.mode;
    // The request, then each step it names in sequence: every part is ranked alone and the rankings merged.
    const parts = [query, ...query.steps];
    const embeddings = this.embeddings;
    const filters = input.filters ?? {};
    // Every part is embedded while the lexical legs run: neither needs the other. Unless there is
    // nothing to overlap: every part's vector is cached (a request seen before, the shortlist
    // recomputed after a catalog change), and one statement costs less than two in a row. Or
    // queries already wait for the in-process encoder: it is then the bottleneck, and statements
    // run meanwhile take CPU from it on a shared machine. Both legs then run as one statement once
    // the vector is there (native PostgreSQL, 10,000 and 100,000 tools: see benchmarks.md).
    const oneStatement =
      embeddings !== undefined && requested !== 'lexical' && (embeddings.queued > 0 || parts.every((part) => embeddings.has(principal.tenant, part.intentText)));
    const embedding = timed(
      embeddings && requested !== 'lexical'
        ? inSpan('discover.embed', () => Promise.all(parts.map((part) => embeddings.embed(principal.tenant, part.intentText))))
        : Promise.resolve([]),
    );
    const lexicalSide = (async () => {
      const stats = await inSpan('discover.stats', () => this.stats.get(reads, principal.tenant, principal.scopes, revision));
      const counted = performance.now();
      const requests: LexicalRequest[] = parts.map((part) => ({
        visibility,
        filters,
        text: part.lexicalText,
        intentText: part.lexicalIntentText,
        nameTokens: part.nameTokens,
        stats,
        bm25: BM25_PARAMS,
        depth: CANDIDATE_DEPTH,
      }));
      const lexical = oneStatement ? undefined : await timed(inSpan('discover.lexical', () => Promise.all(requests.map((request) => lexicalCandidates(reads, request)))));
      return { stats, counted, requests, lexical };
    })();
    const [{ value: vectors, ms: embeddingMs }, { stats, counted, requests, lexical }] = await Promise.all([embedding, lexicalSide]);
    const searchMode: RankingMode = vectors[0] ? requested : 'lexical';
    const legsDone = performance.now();
    const retrievals = await Promise.all(parts.map((_, i) => {
      const values = searchMode === 'lexical' ? undefined : vectors[i];
      const request = requests[i]!;
      const early = lexical?.value[i];
      const vector = values && embeddings ? { model: embeddings.model, values, search: stats.visible >= this.vectorIndexMinTools ? ('index' as const) : ('exact' as const) } : undefined;
      if (!vector) return early ? { candidates: early.top, vectorSearch: undefined } : inSpan('discover.lexical', () => retrieveCandidates(reads, request));
      return inSpan('discover.vector', () => (early ? vectorCandidates(reads, request, early, vector) : retrieveCandidates(reads, { ...request, vector })));
    }));
    const retrieved = performance.now();
    const vectorSearch: VectorSearchOutcome | undefined = retrievals.find((r) => r.vectorSearch)?.vectorSearch;
    // A hybrid pool holds up to both legs' depth; a lexical one stands for as many tools.
    const rankings: Ranking[] = retrievals.map((r) =>
      fuse(r.candidates, this.fusion, r.vectorSearch ? searchMode : 'lexical', { lexicalPool: Math.min(stats.visible, 2 * CANDIDATE_DEPTH), steps: parts.length > 1 }),
    );
    const { ranked, lowConfidence } = mergeRankings(rankings);
    const top = ranked.slice(0, input.top_k);
    const fused = performance.now();

    const rows = new Map((await inSpan('discover.fetch', () => shortlistRows(reads, visibility, top.map((r) => r.toolId)))).map((row) => [row.id, row]));
    const fetched = performance.now();
    const rendering = startStage('discover.render');
    const tools: DiscoveredTool[] = [];
    let shortlistTokens = 0;
    for (const { toolId, score } of top) {
      const row = rows.get(toolId);
      if (!row) continue; // changed or retired between the two reads: never show it
      const { schema, strictFallback } = renderForModel(documentOf(row), input.format, input.strict);
      tools.push({ name: row.name, version: row.version, score, card: toCard(row), schema, ...(strictFallback === undefined ? {} : { strict_fallback: strictFallback }) });
      // Stored costs are of the usual renderings; a strict one is counted as it is sent.
      shortlistTokens += input.strict === true ? tokensOf(schema) : ((row.tokenCosts as Record<Format, number>)[input.format] ?? 0);
    }
    rendering.end();
    const rendered = performance.now();
    return {
      // Filed under the revision read before any of it: a change committed meanwhile bumps past it.
      shortlist: { revision, tools, shortlistTokens, catalogTokens: stats.catalogTokens[input.format], withheld: stats.withheld, lowConfidence, searchMode },
      timings: {
        embedding: embeddingMs,
        stats: counted - started,
        lexical: lexical?.ms,
        vector: retrieved - legsDone,
        retrieval: retrieved - counted,
        fusion: fused - retrieved,
        fetch: fetched - fused,
        rendering: rendered - fetched,
      },
      vectorSearch,
      degraded: vectors[0] === undefined && this.embeddings !== undefined && requested !== 'lexical',
    };
  }
}
