import { and, arrayOverlaps, eq, inArray, param, sql, type SQL } from 'drizzle-orm';
import { toSql } from 'pgvector';

import { type Executor, rowsOf } from '../db/client.js';
import { tools, type ToolRow } from '../db/schema.js';
import { visibleTo, type Visibility } from '../tools/repository.js';
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
  catalogTokens: { openai: number; anthropic: number; mcp: number; raw: number };
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
           coalesce(sum((${tools.tokenCosts}->>'anthropic')::int) filter (where ${visible}), 0)::int as anthropic,
           coalesce(sum((${tools.tokenCosts}->>'mcp')::int) filter (where ${visible}), 0)::int as mcp,
           coalesce(sum((${tools.tokenCosts}->>'raw')::int) filter (where ${visible}), 0)::int as raw
    from ${tools}
    where ${tools.tenantId} = ${tenantId} and ${tools.status} = 'active'`));
  const r = row ?? {};
  const n = (key: string): number => Number(r[key] ?? 0);
  return {
    visible: n('visible'),
    withheld: n('withheld'),
    avgLength: { a: n('a'), b: n('b'), c: n('c'), d: n('d') },
    catalogTokens: { openai: n('openai'), anthropic: n('anthropic'), mcp: n('mcp'), raw: n('raw') },
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
  /** Lowest and highest cosine over every candidate the caller may see (for normalization). */
  cosineLow: number | null;
  cosineHigh: number | null;
  /** Allowed calls of the tool so far (the popularity prior). */
  calls: number;
}

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
  vector?: { model: string; values: number[] };
  /** How many candidates each leg contributes. */
  depth: number;
}

/**
 * Both retrieval legs in one statement, each filtered by the same security predicate: BM25F over
 * the postings of the query's lexemes (IDF from what the caller may see), and exact cosine over
 * the tool vectors (max over a tool's vectors). Returns the union of each leg's top `depth`,
 * with both legs' scores for every candidate so fusion sees complete evidence.
 */
export async function retrieveCandidates(executor: Executor, request: RetrievalRequest): Promise<Candidate[]> {
  const { bm25, stats, depth } = request;
  const where = candidatePredicate(request.visibility, request.filters);
  const avg = (x: number) => Math.max(x, 1);
  // Constants are inlined as float8 so PostgreSQL does no numeric arithmetic per posting.
  const f8 = (x: number) => `${Number.isFinite(x) ? x : 0}::float8`;
  const fieldTf = (tf: string, len: string, weight: number, average: number) =>
    sql.raw(`${f8(weight)} * p.${tf} / (${f8(1 - bm25.b)} + ${f8(bm25.b / avg(average))} * p.${len})`);

  // Postings are read first, by (tenant, lexeme) through the primary key, then joined to the
  // visible tools: a materialized CTE keeps that plan whatever the planner's statistics say.
  const lexical = sql`
    hits as materialized (
      select tool_id, lexeme, tf_a, tf_b, tf_c, tf_d from tool_terms
      where tenant_id = ${request.visibility.tenantId}
        and lexeme = any((select array_agg(u.lexeme) from unnest(to_tsvector('english', ${request.text})) u)::text[])
    ),
    p as (
      select tt.tool_id, tt.lexeme, tt.tf_a, tt.tf_b, tt.tf_c, tt.tf_d,
             ${tools.lenA} as len_a, ${tools.lenB} as len_b, ${tools.lenC} as len_c, ${tools.lenD} as len_d,
             lower(${tools.name}) = any(${param(request.nameTokens)}::text[]) as exact
      from hits tt join ${tools} on ${tools.id} = tt.tool_id
      where ${where}
    ),
    df as (select lexeme, count(*)::float8 as df from p group by lexeme),
    scored as (
      select p.tool_id, bool_or(p.exact) as exact,
             sum(ln(1 + (greatest(${stats.visible}::float8, df.df) - df.df + 0.5) / (df.df + 0.5))
                 * (w.tf * ${sql.raw(f8(bm25.k1 + 1))}) / (w.tf + ${sql.raw(f8(bm25.k1))})) as score
      from p join df using (lexeme)
      cross join lateral (select ${fieldTf('tf_a', 'len_a', bm25.weights.A, stats.avgLength.a)}
                               + ${fieldTf('tf_b', 'len_b', bm25.weights.B, stats.avgLength.b)}
                               + ${fieldTf('tf_c', 'len_c', bm25.weights.C, stats.avgLength.c)}
                               + ${fieldTf('tf_d', 'len_d', bm25.weights.D, stats.avgLength.d)} as tf) w
      group by p.tool_id
    ),
    lex as (
      select tool_id, exact, score, row_number() over (order by score desc, tool_id) as rank
      from scored where score > 0 or exact
      order by score desc, tool_id limit ${depth}
    )`;

  let statement: SQL;
  if (request.vector) {
    const vector = toSql(request.vector.values) as string;
    statement = sql`
      with ${lexical},
      vall as (
        select e.tool_id, max(1 - (e.embedding <=> ${vector}::vector)) as sim
        from tool_embeddings e join ${tools} on ${tools.id} = e.tool_id
        where e.model = ${request.vector.model} and ${where}
        group by e.tool_id
      ),
      vec as (
        select tool_id, sim, min(sim) over () as lo, max(sim) over () as hi,
               row_number() over (order by sim desc, tool_id) as rank
        from vall
      )
      select coalesce(l.tool_id, v.tool_id) as tool_id, l.score as lexical, l.rank as lexical_rank, coalesce(l.exact, false) as exact,
             v.sim as cosine, v.rank as vector_rank, v.lo as cosine_low, v.hi as cosine_high,
             (select u.calls from tool_usage u where u.tool_id = coalesce(l.tool_id, v.tool_id)) as calls
      from lex l
      full join (select * from vec where rank <= ${depth} or tool_id in (select tool_id from lex)) v on v.tool_id = l.tool_id`;
  } else {
    statement = sql`
      with ${lexical}
      select tool_id, score as lexical, rank as lexical_rank, exact,
             null::float8 as cosine, null::bigint as vector_rank, null::float8 as cosine_low, null::float8 as cosine_high,
             (select u.calls from tool_usage u where u.tool_id = lex.tool_id) as calls
      from lex`;
  }
  const rows = await rowsOf<Record<string, unknown>>(executor.execute(statement));
  const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
  return rows.map((r) => ({
    toolId: Number(r.tool_id),
    lexical: num(r.lexical),
    lexicalRank: num(r.lexical_rank),
    exact: r.exact === true,
    cosine: num(r.cosine),
    vectorRank: num(r.vector_rank),
    cosineLow: num(r.cosine_low),
    cosineHigh: num(r.cosine_high),
    calls: num(r.calls) ?? 0,
  }));
}

/** Full rows of the shortlist, re-checked against the security predicate. */
export async function shortlistRows(executor: Executor, visibility: Visibility, ids: number[]): Promise<ToolRow[]> {
  if (ids.length === 0) return [];
  return executor.select().from(tools).where(and(visibleTo(visibility), inArray(tools.id, ids)));
}
