/**
 * The lexical leg of the retrieval statement (the rest: src/discovery/retrieval-sql.ts): BM25F
 * over the postings in SQL, with the security predicate on every posting it reads. bm25f.ts is
 * the TypeScript reference of its scores.
 */
import { and, param, type SQL, sql } from 'drizzle-orm';

import { tools } from '../../db/schema.js';
import { postingVisibleTo, type Visibility, visibleTo } from '../access.js';
import type { Bm25Params, TermWeight } from './bm25f.js';

interface LexicalLegInput {
  visibility: Visibility;
  /** The caller's narrowing (category, tags) as a predicate on the tool row, applied next to the security filter. */
  filter: SQL | undefined;
  /** The query's searched lexemes with their weights (termWeights in bm25f.ts: common words already left out). */
  terms: readonly TermWeight[];
  /** Lower-cased query tokens that may be tool names. */
  nameTokens: string[];
  /** Numbers of the tenant's scope sets the caller holds (CatalogStats.scopeSets). */
  scopeSets: readonly number[];
  /** Average field lengths over what the caller may see (A to D). */
  averageLength: { a: number; b: number; c: number; d: number };
  bm25: Bm25Params;
  depth: number;
}

// Constants are inlined as float8 so PostgreSQL does no numeric arithmetic per posting.
const f8 = (x: number): string => `${Number.isFinite(x) ? x : 0}::float8`;

/**
 * `searched_terms` and `lexical_scores` (see lexicalLeg); with `only`, a query of tool ids, just
 * those tools are scored: one posting probe per (lexeme, tool) on the primary key instead of
 * every posting of the lexemes.
 */
export function lexicalScoring(input: Omit<LexicalLegInput, 'nameTokens' | 'depth'>, only?: SQL): SQL {
  const { bm25, averageLength } = input;
  const filters = input.filter;
  const norm = (field: 'a' | 'b' | 'c' | 'd') =>
    `(${f8(1 - bm25.b)} + ${f8(bm25.b / Math.max(averageLength[field], 1))} * posting.len_${field})`;
  const present = input.terms.filter((t) => t.present);
  return sql`
    searched_terms as (
      select * from unnest(${param(present.map((t) => t.lexeme))}::text[], ${param(present.map((t) => t.idf))}::float8[],
                           ${param(present.map((t) => t.nameWeight))}::float8[]) as term(lexeme, idf, name_weight)
    ),
    lexical_scores as (
      select field.tool_id,
             sum(field.idf * (field.tf * ${sql.raw(f8(bm25.k1 + 1))}) / (field.tf + ${sql.raw(f8(bm25.k1))})) as score
      from (
        select posting.tool_id, term.idf,
               term.name_weight * posting.tf_a / ${sql.raw(norm('a'))}
             + ${sql.raw(f8(bm25.weights.B))} * posting.tf_b / ${sql.raw(norm('b'))}
             + ${sql.raw(f8(bm25.weights.C))} * posting.tf_c / ${sql.raw(norm('c'))}
             + ${sql.raw(f8(bm25.weights.D))} * posting.tf_d / ${sql.raw(norm('d'))} as tf
        from searched_terms term
        join tool_terms posting on posting.lexeme = term.lexeme
        where ${postingVisibleTo(input.visibility, 'posting', input.scopeSets)}
          ${only ? sql`and posting.tool_id in (${only})` : sql``}
          ${filters ? sql`and exists (select 1 from ${tools} where ${tools.id} = posting.tool_id and ${filters})` : sql``}
        -- Kept a subquery (not pulled up), so each posting's pooled tf is computed once.
        offset 0
      ) field
      group by field.tool_id
    )`;
}

/**
 * Lexical leg, BM25F over the postings of the query's lexemes (tokenized by PostgreSQL). Each
 * lexeme's IDF and name weight come with it (computed from its visible counts, which choosing the
 * searched lexemes already read), so a posting is read once and scored as it is read:
 * - `searched_terms`: the searched lexemes that some visible tool has, with IDF (times the word's
 *   weight in the request) and name weight (0 for a namespace word: see NAMESPACE_MIN_TOOLS);
 * - `lexical_scores`: per tool its BM25F score, from one
 *   index-only range scan per lexeme with the security predicate on the posting itself
 *   (migrations 0006, 0015);
 * - `named_tools`: visible tools the query names exactly;
 * - `lexical_top`: those, then the best by score, `depth` in all, each carrying its score. The
 *   vector statement scores only the vector leg's tools that this top left out (lexicalScoring's
 *   `only`): joined back for every candidate, the planner sorted every scored tool (~29,000 of
 *   90,000 at 100,000 tools) to merge it with the ~200 it needed.
 */
export function lexicalLeg(input: LexicalLegInput): SQL {
  const { depth } = input;
  const filters = input.filter;
  return sql`
    ${lexicalScoring(input)},
    named_tools as (
      select ${tools.id} as tool_id from ${tools}
      where ${and(visibleTo(input.visibility), filters)} and lower(${tools.name}) = any(${param(input.nameTokens)}::text[])
    ),
    lexical_top as (
      select named.tool_id, true as exact, scored.score
      from named_tools named
      left join lexical_scores scored using (tool_id)
      union all
      (select tool_id, false, score from lexical_scores
       where tool_id not in (select tool_id from named_tools)
       order by score desc, tool_id
       limit greatest(${depth} - (select count(*) from named_tools), 0))
    )`;
}
