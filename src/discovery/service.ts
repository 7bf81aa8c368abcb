import { randomUUID } from 'node:crypto';

import type { Principal } from '../auth/principal.js';
import type { Db, Executor } from '../db/client.js';
import type { QueryEmbeddings } from '../embedding/query-cache.js';
import type { Format } from '../tools/formats.js';
import { renderTool } from '../tools/formats.js';
import { documentOf, toCard } from '../tools/views.js';
import type { CatalogStatsCache } from './catalog-cache.js';
import { BM25_PARAMS, fuse, FUSION_PARAMS, type FusionParams, type RankingMode } from './fusion.js';
import type { DiscoveryLogEntry } from './log-repository.js';
import { prepareQuery } from './query.js';
import { retrieveCandidates, shortlistRows, type VectorSearchOutcome } from './repository.js';
import type { DiscoveredTool, DiscoverInput, DiscoverResult } from './schemas.js';

/** Milliseconds spent per stage of one discovery (for metrics and the log). */
export interface StageTimings {
  /** Query embedding (cache lookup, or the embedder call on a miss). */
  embedding: number;
  /** Catalog statistics for BM25 and token accounting (cached per tenant and scope set). */
  stats: number;
  /** Both retrieval legs (lexical BM25F and vector), one SQL statement. */
  retrieval: number;
  fusion: number;
  /** Reading the shortlist's full rows. */
  fetch: number;
  /** Cards and schemas in the requested format. */
  rendering: number;
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
  /** Where retrieval reads (the read replica when configured); the discovery log is always written to `db`. */
  reads?: Executor;
  /** Score floors (calibrated probabilities); FUSION_PARAMS' defaults when absent. */
  scoreFloors?: Pick<FusionParams, 'minScore' | 'lowConfidenceScore'>;
  /** Receives each discovery's per-stage timings (metrics). */
  onTimings?: (timings: StageTimings, mode: RankingMode, vectorSearch: VectorSearchOutcome | undefined) => void;
}

/** How many candidates each retrieval leg contributes to fusion. */
const CANDIDATE_DEPTH = 100;

/**
 * Discovery: the caller's scopes filter every query inside SQL; both legs rank the rest; the
 * fused shortlist comes back with full schemas in the requested format.
 */
export class DiscoveryService {
  private readonly vectorIndexMinTools: number;
  private readonly reads: Executor;
  private readonly fusion: FusionParams;
  private readonly onTimings: NonNullable<DiscoveryOptions['onTimings']>;
  private readonly log: DiscoveryLogSink;

  constructor(
    db: Db,
    private readonly embeddings: QueryEmbeddings | undefined,
    private readonly stats: CatalogStatsCache,
    options: DiscoveryOptions,
  ) {
    this.log = options.log;
    this.vectorIndexMinTools = options.vectorIndexMinTools ?? 1000;
    this.reads = options.reads ?? db;
    this.fusion = { ...FUSION_PARAMS, ...options.scoreFloors };
    this.onTimings = options.onTimings ?? (() => undefined);
  }

  async discover(principal: Principal, input: DiscoverInput): Promise<DiscoverResult> {
    const started = performance.now();
    const query = prepareQuery(input.query);
    const visibility = { tenantId: principal.tenant, scopes: principal.scopes, includeRetired: false };
    const filters = input.filters ?? {};

    // hybrid degrades to lexical when no query vector can be had
    const requested = input.mode;
    const vector = this.embeddings && requested !== 'lexical' ? await this.embeddings.embed(principal.tenant, query.text) : undefined;
    const searchMode: RankingMode = vector ? requested : 'lexical';
    const embedded = performance.now();
    const stats = await this.stats.get(this.reads, principal.tenant, principal.scopes);
    const counted = performance.now();
    const { candidates, vectorSearch } = await retrieveCandidates(this.reads, {
      visibility,
      filters,
      text: query.lexicalText,
      nameTokens: query.nameTokens,
      stats,
      bm25: BM25_PARAMS,
      vector:
        vector && this.embeddings
          ? { model: this.embeddings.model, values: vector, search: stats.visible >= this.vectorIndexMinTools ? 'index' : 'exact' }
          : undefined,
      depth: CANDIDATE_DEPTH,
    });
    const retrieved = performance.now();
    const { ranked, lowConfidence } = fuse(candidates, this.fusion, searchMode);
    const top = ranked.slice(0, input.top_k);
    const fused = performance.now();

    const rows = new Map((await shortlistRows(this.reads, visibility, top.map((r) => r.toolId))).map((row) => [row.id, row]));
    const fetched = performance.now();
    const tools: DiscoveredTool[] = [];
    let shortlistTokens = 0;
    for (const { toolId, score } of top) {
      const row = rows.get(toolId);
      if (!row) continue; // changed or retired between the two reads: never show it
      tools.push({ name: row.name, version: row.version, score, card: toCard(row), schema: renderTool(documentOf(row), input.format) });
      shortlistTokens += (row.tokenCosts as Record<Format, number>)[input.format] ?? 0;
    }
    const result: DiscoverResult = {
      discovery_id: randomUUID(),
      tools,
      tokens: { shortlist: shortlistTokens, catalog: stats.catalogTokens[input.format] },
      low_confidence: lowConfidence,
      search_mode: searchMode,
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
      shortlist: tools.map((t) => ({ name: t.name, version: t.version, score: t.score })),
      searchMode,
      lowConfidence,
      topScore: tools[0]?.score ?? null,
      withheld: stats.withheld,
      latencyMs: rendered - started,
    });
    const logged = performance.now();
    this.onTimings(
      {
        embedding: embedded - started,
        stats: counted - embedded,
        retrieval: retrieved - counted,
        fusion: fused - retrieved,
        fetch: fetched - fused,
        rendering: rendered - fetched,
        log: logged - rendered,
        total: logged - started,
      },
      searchMode,
      vectorSearch,
    );
    return result;
  }
}
