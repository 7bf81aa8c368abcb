import { and, arrayOverlaps, eq, inArray, param, sql, type SQL } from 'drizzle-orm';
import { toSql } from 'pgvector';

import { type Executor, rowsOf } from '../db/client.js';
import { tools, type ToolRow } from '../db/schema.js';
import { postingVisibleTo, visibleTo, type Visibility } from '../tools/repository.js';
import { literal, vectorType } from '../embedding/vector-index.js';
import { FORMATS, type Format } from './formats.js';
import type { Bm25Params } from './fusion.js';

/** Optional narrowing a caller asks for; applied inside SQL next to the security filter. */
export interface DiscoveryFilters {
  category?: string;
  tags?: string[];
}

/** The security filter plus the caller's filters: the one predicate of every retrieval leg. */
function candidatePredicate(visibility: Visibility, filters: DiscoveryFilters): SQL | undefined {
  return and(
    visibleTo(visibility),
    filters.category === undefined ? undefined : eq(tools.category, filters.category),
    filters.tags === undefined || filters.tags.length === 0 ? undefined : arrayOverlaps(tools.tags, filters.tags),
  );
}

/** Collection statistics of what a caller may see, for BM25 and token accounting. */
export interface CatalogStats {
  visible: number;
  withheld: number;
  avgLength: { a: number; b: number; c: number; d: number };
  catalogTokens: Record<Format, number>;
  /** The tenant's catalog revision these statistics were read at (same statement, same snapshot). */
  revision: number;
}

/** One aggregate over the tenant's active tools: what the caller sees, and how many it does not. */
export async function catalogStats(executor: Executor, tenantId: string, scopes: readonly string[]): Promise<CatalogStats> {
  const visible = sql`${tools.requiredScopes} <@ ${param([...scopes])}::text[]`;
  const [row] = await rowsOf<Record<string, number>>(executor.execute(sql`
    select count(*) filter (where ${visible})::int as visible,
           count(*) filter (where not ${visible})::int as withheld,
           coalesce(avg(${tools.lenA}) filter (where ${visible}), 0)::float8 as a,
           coalesce(avg(${tools.lenB}) filter (where ${visible}), 0)::float8 as b,
           coalesce(avg(${tools.lenC}) filter (where ${visible}), 0)::float8 as c,
           coalesce(avg(${tools.lenD}) filter (where ${visible}), 0)::float8 as d,
           coalesce(sum((${tools.tokenCosts}->>'openai')::int) filter (where ${visible}), 0)::int as openai,
           coalesce(sum((${tools.tokenCosts}->>'openai-responses')::int) filter (where ${visible}), 0)::int as "openai-responses",
           coalesce(sum((${tools.tokenCosts}->>'gemini')::int) filter (where ${visible}), 0)::int as gemini,
           coalesce(sum((${tools.tokenCosts}->>'anthropic')::int) filter (where ${visible}), 0)::int as anthropic,
           coalesce(sum((${tools.tokenCosts}->>'mcp')::int) filter (where ${visible}), 0)::int as mcp,
           coalesce(sum((${tools.tokenCosts}->>'raw')::int) filter (where ${visible}), 0)::int as raw,
           coalesce((select revision from catalog_revisions where tenant_id = ${tenantId}), 0)::float8 as revision
    from ${tools}
    where ${tools.tenantId} = ${tenantId} and ${tools.status} = 'active'`));
  const r = row ?? {};
  const n = (key: string): number => Number(r[key] ?? 0);
  return {
    visible: n('visible'),
    withheld: n('withheld'),
    avgLength: { a: n('a'), b: n('b'), c: n('c'), d: n('d') },
    catalogTokens: Object.fromEntries(FORMATS.map((format) => [format, n(format)])) as Record<Format, number>,
    revision: n('revision'),
  };
}

/** One candidate tool with whatever each leg said about it. */
export interface Candidate {
  toolId: number;
  /** BM25F score; null when the lexical leg did not return the tool. */
  lexical: number | null;
  lexicalRank: number | null;
  /** The query names the tool exactly. */
  exact: boolean;
  /** Best cosine similarity over the tool's vectors; null without a query vector. */
  cosine: number | null;
  vectorRank: number | null;
  /** Allowed calls of the tool so far (the popularity prior). */
  calls: number;
}

/** How the vector leg finds its candidates. */
export type VectorSearch =
  /** Exact cosine over every vector the caller may see. */
  | 'exact'
  /** The model's HNSW index with an iterative scan, filtered by the same predicate. */
  | 'index';

export interface RetrievalRequest {
  visibility: Visibility;
  filters: DiscoveryFilters;
  /** Query text as the index sees it (identifiers already expanded). */
  text: string;
  /** Lower-cased query tokens that may be tool names. */
  nameTokens: string[];
  stats: CatalogStats;
  bm25: Bm25Params;
  /** Query vector and model, or undefined for a lexical-only search. */
  vector?: { model: string; values: number[]; search: VectorSearch };
  /** How many candidates each leg contributes. */
  depth: number;
}

/** How the vector leg ran: index_fallback when the index scan came back short. */
export type VectorSearchOutcome = 'exact' | 'index' | 'index_fallback';

/** Candidates, and how the vector leg found them (undefined without a query vector). */
export interface Retrieved {
  candidates: Candidate[];
  vectorSearch: VectorSearchOutcome | undefined;
}

/** One statement's result: candidates, and how many vectors the index scan returned. */
interface Retrieval {
  candidates: Candidate[];
  /** Vectors the index scan returned (index search only). */
  nearest: number | null;
}

/**
 * Both retrieval legs in one statement, each filtered by the security predicate: BM25F over the
 * postings of the query's lexemes (IDF from what the caller may see), and cosine over the tool
 * vectors (max over a tool's vectors). Returns the union of each leg's top `depth`, with both
 * legs' scores for every candidate so fusion sees complete evidence.
 *
 * The vector leg is exact, or for large catalogs an HNSW iterative scan (see vector-index.ts).
 * An index scan that returns fewer vectors than asked has hit pgvector's scan bound before
 * finding enough the caller may see (a very selective filter): the exact search then runs, so
 * filtering can never hide an authorized tool.
 */
export async function retrieveCandidates(executor: Executor, request: RetrievalRequest): Promise<Retrieved> {
  if (request.vector?.search === 'index') {
    const wanted = nearestWanted(request.depth);
    // The session settings (src/db/client.ts) make this an iterative scan.
    const viaIndex = await runRetrieval(executor, request);
    if ((viaIndex.nearest ?? 0) >= wanted) return { candidates: viaIndex.candidates, vectorSearch: 'index' };
    const exact = await runRetrieval(executor, { ...request, vector: { ...request.vector, search: 'exact' } });
    return { candidates: exact.candidates, vectorSearch: 'index_fallback' };
  }
  const { candidates } = await runRetrieval(executor, request);
  return { candidates, vectorSearch: request.vector ? 'exact' : undefined };
}

/**
 * Vectors an index search asks for. A tool has several (card, aliases, examples), so this yields
 * fewer than `depth` tools, which is plenty for a top-10 shortlist; asking for 2x depth cost ~3 ms
 * more at 10,000 tools (PGlite).
 */
const nearestWanted = (depth: number): number => depth;

/** Caller filters (category, tags) on the tool row, or undefined when there are none. */
function filterPredicate(filters: DiscoveryFilters): SQL | undefined {
  return and(
    filters.category === undefined ? undefined : eq(tools.category, filters.category),
    filters.tags === undefined || filters.tags.length === 0 ? undefined : arrayOverlaps(tools.tags, filters.tags),
  );
}

async function runRetrieval(executor: Executor, request: RetrievalRequest): Promise<Retrieval> {
  const { bm25, stats, depth } = request;
  const where = candidatePredicate(request.visibility, request.filters);
  const filters = filterPredicate(request.filters);
  const avg = (x: number) => Math.max(x, 1);
  // Constants are inlined as float8 so PostgreSQL does no numeric arithmetic per posting.
  const f8 = (x: number) => `${Number.isFinite(x) ? x : 0}::float8`;
  const fieldTf = (field: 'a' | 'b' | 'c' | 'd', weight: number, average: number) =>
    sql.raw(`${f8(weight)} * p.tf_${field} / (${f8(1 - bm25.b)} + ${f8(bm25.b / avg(average))} * p.len_${field})`);

  // Postings carry the tool's tenant, scopes and field lengths (migration 0006): the leg is one
  // index-only range scan per query lexeme, filtered by the security predicate on the posting.
  // The tool row is read only for an exact-name match among the scored, or a caller's filters.
  const lexical = sql`
    p as materialized (
      select p.tool_id, p.lexeme, p.tf_a, p.tf_b, p.tf_c, p.tf_d, p.len_a, p.len_b, p.len_c, p.len_d
      from tool_terms p
      where ${postingVisibleTo(request.visibility, 'p')}
        and p.lexeme = any((select array_agg(u.lexeme) from unnest(to_tsvector('english', ${request.text})) u)::text[])
        ${filters ? sql`and exists (select 1 from ${tools} where ${tools.id} = p.tool_id and ${filters})` : sql``}
    ),
    idf as (
      select lexeme, ln(1 + (greatest(${stats.visible}::float8, count(*)) - count(*) + 0.5) / (count(*) + 0.5)) as idf
      from p group by lexeme
    ),
    scored as (
      select p.tool_id,
             sum(idf.idf * (w.tf * ${sql.raw(f8(bm25.k1 + 1))}) / (w.tf + ${sql.raw(f8(bm25.k1))})) as score
      from p join idf using (lexeme)
      cross join lateral (select ${fieldTf('a', bm25.weights.A, stats.avgLength.a)}
                               + ${fieldTf('b', bm25.weights.B, stats.avgLength.b)}
                               + ${fieldTf('c', bm25.weights.C, stats.avgLength.c)}
                               + ${fieldTf('d', bm25.weights.D, stats.avgLength.d)} as tf) w
      group by p.tool_id
    ),
    named as (
      select ${tools.id} as tool_id from ${tools}
      where ${where} and lower(${tools.name}) = any(${param(request.nameTokens)}::text[])
    ),
    lex as (
      select tool_id, n.tool_id is not null as exact, coalesce(s.score, 0) as score,
             row_number() over (order by coalesce(s.score, 0) desc, tool_id) as rank
      from scored s full join named n using (tool_id)
      order by n.tool_id is not null desc, coalesce(s.score, 0) desc, tool_id
      limit ${depth}
    )`;

  let statement: SQL;
  if (request.vector) {
    const { model, values, search } = request.vector;
    const query = sql`${toSql(values) as string}::vector`;
    let vectors: SQL;
    if (search === 'index') {
      // The expression, dims and model literal match the partial HNSW index of vector-index.ts.
      const typed = vectorType(values.length);
      const distance = sql`e.embedding::${typed} <=> ${toSql(values) as string}::${typed}`;
      vectors = sql`
        nearest as materialized (
          select e.tool_id, ${distance} as distance
          from tool_embeddings e join ${tools} on ${tools.id} = e.tool_id
          where e.model = ${sql.raw(literal(model))} and ${where}
          order by ${distance}
          limit ${nearestWanted(depth)}
        ),
        vall as (
          select tool_id, max(1 - distance) as sim from nearest group by tool_id
          union all
          -- Lexical candidates the index did not return still get their exact cosine.
          select e.tool_id, max(1 - (e.embedding <=> ${query}))
          from tool_embeddings e
          where e.model = ${model} and e.tool_id in (select tool_id from lex except select tool_id from nearest)
          group by e.tool_id
        )`;
    } else {
      vectors = sql`
        vall as (
          select e.tool_id, max(1 - (e.embedding <=> ${query})) as sim
          from tool_embeddings e join ${tools} on ${tools.id} = e.tool_id
          where e.model = ${model} and ${where}
          group by e.tool_id
        )`;
    }
    statement = sql`
      with ${lexical},
      ${vectors},
      vec as (select tool_id, sim, row_number() over (order by sim desc, tool_id) as rank from vall)
      select coalesce(l.tool_id, v.tool_id) as tool_id, l.score as lexical, l.rank as lexical_rank, coalesce(l.exact, false) as exact,
             v.sim as cosine, v.rank as vector_rank,
             (select u.calls from tool_usage u where u.tool_id = coalesce(l.tool_id, v.tool_id)) as calls,
             ${search === 'index' ? sql`(select count(*) from nearest)` : sql`null::bigint`} as nearest
      from lex l
      full join (select * from vec where rank <= ${depth} or tool_id in (select tool_id from lex)) v on v.tool_id = l.tool_id`;
  } else {
    statement = sql`
      with ${lexical}
      select tool_id, score as lexical, rank as lexical_rank, exact,
             null::float8 as cosine, null::bigint as vector_rank,
             (select u.calls from tool_usage u where u.tool_id = lex.tool_id) as calls, null::bigint as nearest
      from lex`;
  }
  const rows = await rowsOf<Record<string, unknown>>(executor.execute(statement));
  const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
  return {
    nearest: num(rows[0]?.nearest) ?? (request.vector?.search === 'index' ? 0 : null),
    candidates: rows.map((r) => ({
      toolId: Number(r.tool_id),
      lexical: num(r.lexical),
      lexicalRank: num(r.lexical_rank),
      exact: r.exact === true,
      cosine: num(r.cosine),
      vectorRank: num(r.vector_rank),
      calls: num(r.calls) ?? 0,
    })),
  };
}

/** Full rows of the shortlist, re-checked against the security predicate. */
export async function shortlistRows(executor: Executor, visibility: Visibility, ids: number[]): Promise<ToolRow[]> {
  if (ids.length === 0) return [];
  return executor.select().from(tools).where(and(visibleTo(visibility), inArray(tools.id, ids)));
}
