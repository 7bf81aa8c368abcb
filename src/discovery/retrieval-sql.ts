/**
 * The retrieval statement in named pieces: the lexical leg (src/tools/lexical/lexical-sql.ts), the
 * vector leg, and how they combine. Each piece is a list of CTEs that reads only what the caller
 * may see (the security predicate is inside every one of them). repository.ts runs the statement.
 */
import { and, arrayOverlaps, eq, param, type SQL, sql } from 'drizzle-orm';
import { toSql } from 'pgvector';

import { tools } from '../db/schema.js';
import { literal, vectorType } from '../embedding/vector-index.js';
import { type Visibility, visibleTo } from '../tools/access.js';

/** Optional narrowing a caller asks for; applied inside SQL next to the security filter. */
export interface DiscoveryFilters {
  category?: string;
  tags?: string[];
}

/** How the vector leg finds its candidates. */
export type VectorSearch =
  /** Exact cosine over every vector the caller may see. */
  | 'exact'
  /** The model's HNSW index with an iterative scan, filtered by the same predicate. */
  | 'index';

interface VectorLegInput {
  visibility: Visibility;
  filters: DiscoveryFilters;
  model: string;
  values: number[];
  search: VectorSearch;
  depth: number;
}

/** Caller filters (category, tags) on the tool row, or undefined when there are none. */
export function filterPredicate(filters: DiscoveryFilters): SQL | undefined {
  return and(
    filters.category === undefined ? undefined : eq(tools.category, filters.category),
    filters.tags === undefined || filters.tags.length === 0 ? undefined : arrayOverlaps(tools.tags, filters.tags),
  );
}

/** The security filter plus the caller's filters, on the tool row. */
function candidatePredicate(visibility: Visibility, filters: DiscoveryFilters): SQL | undefined {
  return and(visibleTo(visibility), filterPredicate(filters));
}

/**
 * How many vectors the index scan asks for to find `depth` tools: a tool has ~2.6 vectors on
 * real catalogs (card, parameters, aliases, examples), and fusion measures each candidate
 * against its pool, so an index search must see about as many tools as the exact one.
 */
export const nearestVectors = (depth: number): number => 3 * depth;

/**
 * Vector leg, cosine over the tool vectors the caller may see (max over a tool's vectors):
 * - exact: `vector_distances` of every visible vector, `vector_scores` their best per tool;
 * - index: `vector_nearest`, the `nearestVectors(depth)` nearest vectors from the model's HNSW index (iterative
 *   scan, same predicate), then `vector_scores` adds the exact cosine of the lexical leg's
 *   candidates the index did not return;
 * - `vector_top`: the `depth` most similar tools.
 */
export function vectorLeg(input: VectorLegInput): SQL {
  const { model, values, depth } = input;
  const where = candidatePredicate(input.visibility, input.filters);
  const query = sql`${toSql(values) as string}::vector`;
  if (input.search === 'exact') {
    // Distances first, then the max per tool: grouped directly, PostgreSQL sorted the vectors
    // themselves (2 KB each at 512 dims), which spilled to disk past work_mem at ~2,000 vectors
    // (1,000 tools: "external merge Disk: 4704kB", about 10 ms of a 32 ms statement).
    return sql`
      vector_distances as materialized (
        select embedding.tool_id, 1 - (embedding.embedding <=> ${query}) as cosine
        from tool_embeddings embedding join ${tools} on ${tools.id} = embedding.tool_id
        where embedding.model = ${model} and ${where}
      ),
      vector_scores as (
        select tool_id, max(cosine) as cosine from vector_distances group by tool_id
      ),
      vector_top as (
        select tool_id, cosine from vector_scores order by cosine desc, tool_id limit ${depth}
      )`;
  }
  // The expression, dims and model literal match the partial HNSW index of vector-index.ts.
  const typed = vectorType(values.length);
  const distance = sql`embedding.embedding::${typed} <=> ${toSql(values) as string}::${typed}`;
  // One table, ordered by distance, limited: the HNSW index is the only cheap plan whatever the
  // planner estimates. The security predicate is a scalar subquery on the tool row (one covering
  // index probe per vector the scan returns), which the planner never turns into a join: as a join,
  // an under-estimated scope filter made it drive from the tools and compute every distance.
  return sql`
    vector_nearest as materialized (
      select embedding.tool_id, ${distance} as distance
      from tool_embeddings embedding
      where embedding.model = ${sql.raw(literal(model))}
        and (select true from ${tools} where ${tools.id} = embedding.tool_id and ${where})
      order by ${distance}
      limit ${nearestVectors(depth)}
    ),
    vector_scores as (
      select tool_id, max(1 - distance) as cosine from vector_nearest group by tool_id
      union all
      select embedding.tool_id, max(1 - (embedding.embedding <=> ${query}))
      from tool_embeddings embedding
      where embedding.model = ${model}
        and embedding.tool_id in (select tool_id from lexical_top except select tool_id from vector_nearest)
      group by embedding.tool_id
    ),
    vector_top as (
      select tool_id, cosine from vector_scores order by cosine desc, tool_id limit ${depth}
    )`;
}

/** A lexical leg's top, already computed (its own statement), as the `lexical_top` CTE of the vector statement. */
export function lexicalTopOf(top: readonly { toolId: number; exact: boolean; lexical: number | null }[]): SQL {
  return sql`
    lexical_top as (
      select * from unnest(${param(top.map((c) => c.toolId))}::bigint[], ${param(top.map((c) => c.exact))}::bool[],
                           ${param(top.map((c) => c.lexical))}::float8[]) as top(tool_id, exact, score)
    )`;
}

/**
 * Combines the legs: the union of each leg's top candidates, each with everything both legs know
 * about it (BM25F, cosine, exact name, allowed calls), so fusion sees complete
 * evidence: the vector leg's tools that the lexical top left out get theirs from `lexical_scores`.
 * `nearest` is how many vectors the index scan returned (null for an exact search).
 */
export function combine(withVector: VectorSearch | undefined): SQL {
  const usage = (alias: string) => sql.raw(`(select usage.calls from tool_usage usage where usage.tool_id = ${alias}.tool_id) as calls`);
  if (withVector === undefined) {
    return sql`
      select top.tool_id, top.score as lexical, top.exact,
             null::float8 as cosine, ${usage('top')}, null::bigint as nearest
      from lexical_top top`;
  }
  return sql`
    , candidates as (
      select tool_id, exact, score from lexical_top
      union all
      select vector.tool_id, false, scored.score
      from vector_top vector
      left join lexical_scores scored using (tool_id)
      where vector.tool_id not in (select tool_id from lexical_top)
    )
    select candidate.tool_id, candidate.score as lexical, candidate.exact,
           vector.cosine, ${usage('candidate')},
           ${withVector === 'index' ? sql`(select count(*) from vector_nearest)` : sql`null::bigint`} as nearest
    from candidates candidate
    -- A join, not a subquery per candidate: the exact search scores every visible tool.
    left join vector_scores vector using (tool_id)`;
}
