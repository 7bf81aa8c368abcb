import { and, getTableColumns, inArray, param, type SQL, sql } from 'drizzle-orm';

import { type Executor, rowsOf } from '../db/client.js';
import { tools } from '../db/schema.js';
import { heldScopeSets, postingVisibleTo, scopesHeld, type Visibility, visibleTo } from '../tools/access.js';
import { type Format, FORMATS } from '../tools/formats.js';
import type { ShortlistRow } from '../tools/views.js';
import { type Bm25Params, commonTermPostings, QUOTED_WORD_WEIGHT, type SearchedTerm, type TermCount, termWeights } from './bm25f.js';
import { combine, type DiscoveryFilters, lexicalLeg, nearestVectors, vectorLeg, type VectorSearch } from './retrieval-sql.js';

export type { DiscoveryFilters, VectorSearch } from './retrieval-sql.js';

/** Collection statistics of what a caller may see, for BM25 and token accounting. */
export interface CatalogStats {
  visible: number;
  withheld: number;
  avgLength: { a: number; b: number; c: number; d: number };
  catalogTokens: Record<Format, number>;
  /** Numbers of the tenant's scope sets the caller holds (the postings' security filter). */
  scopeSets: number[];
  /**
   * Memo of `searchedTerms`: per lexeme, its visible postings (and those with it in the name) counted up to the common-word cap.
   * A function of the revision below, so it lives and dies with these statistics.
   */
  termPostings: Map<string, TermCount>;
  /** The tenant's catalog revision these statistics were read at (same statement, same snapshot). */
  revision: number;
}

/** One aggregate over the tenant's active tools: what the caller sees, and how many it does not. */
export async function catalogStats(executor: Executor, tenantId: string, scopes: readonly string[]): Promise<CatalogStats> {
  const visible = scopesHeld(scopes);
  const [row] = await rowsOf<Record<string, unknown>>(executor.execute(sql`
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
           ${heldScopeSets(tenantId, scopes)} as scope_sets,
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
    scopeSets: ((r.scope_sets as unknown[] | undefined) ?? []).map(Number),
    termPostings: new Map(),
    revision: n('revision'),
  };
}

/** One candidate tool with whatever each leg said about it. */
interface Candidate {
  toolId: number;
  /** BM25F score; null when no query word matches the tool. */
  lexical: number | null;
  /** The query names the tool exactly. */
  exact: boolean;
  /** Best cosine similarity over the tool's vectors; null without a query vector. */
  cosine: number | null;
  /** Allowed calls of the tool so far (the popularity prior). */
  calls: number;
}

export interface RetrievalRequest {
  visibility: Visibility;
  filters: DiscoveryFilters;
  /** Query text as the index sees it (identifiers already expanded). */
  text: string;
  /** The same without quoted values (PreparedQuery.lexicalIntentText); absent: every word weighs fully. */
  intentText?: string;
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
interface Retrieved {
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
 * Both retrieval legs in one statement (retrieval-sql.ts), each filtered by the security
 * predicate, returning the union of each leg's top `depth` with both legs' evidence for every
 * candidate.
 *
 * The vector leg is exact, or for large catalogs an HNSW iterative scan (see vector-index.ts).
 * An index scan that returns fewer vectors than asked has hit pgvector's scan bound before
 * finding enough the caller may see (a very selective filter): the exact search then runs, so
 * filtering can never hide an authorized tool.
 */
export async function retrieveCandidates(executor: Executor, request: RetrievalRequest): Promise<Retrieved> {
  const terms = await searchedTerms(executor, request);
  if (request.vector?.search === 'index') {
    // The session settings (src/db/client.ts) make this an iterative scan.
    const viaIndex = await runRetrieval(executor, request, terms);
    if ((viaIndex.nearest ?? 0) >= nearestVectors(request.depth)) return { candidates: viaIndex.candidates, vectorSearch: 'index' };
    const exact = await runRetrieval(executor, { ...request, vector: { ...request.vector, search: 'exact' } }, terms);
    return { candidates: exact.candidates, vectorSearch: 'index_fallback' };
  }
  const { candidates } = await runRetrieval(executor, request, terms);
  return { candidates, vectorSearch: request.vector ? 'exact' : undefined };
}

/** Most lexemes memoized per catalog-statistics entry (a bound on memory, not on correctness). */
const TERM_MEMO_ENTRIES = 4096;

/**
 * The query's lexemes (PostgreSQL's `english` tokenizer) that the lexical leg searches, with their
 * visible counts: those in fewer than `commonTermPostings` visible tools. Deciding reads up to that
 * many postings of each lexeme, most of the lexical leg's cost on a large catalog (a common word's
 * cap is 20% of it), so the counts are memoized on the catalog statistics, which belong to one
 * catalog revision: only lexemes new at this revision are counted, and the answer is the same as
 * counting them all. Frequent lexemes' counts are read from `term_counts` instead when a rebuild
 * at the tools' current revision stored them (term-counts.ts): reading them is what the cap made expensive. A
 * searched lexeme's counts are exact, so its IDF needs no further read. A lexeme found only in
 * the request's quoted values weighs QUOTED_WORD_WEIGHT.
 */
export async function searchedTerms(executor: Executor, request: Pick<RetrievalRequest, 'visibility' | 'text' | 'intentText' | 'stats'>): Promise<Map<string, SearchedTerm>> {
  const { stats } = request;
  const cap = commonTermPostings(stats.visible);
  const lexemesOf = (text: string) => sql`array(select distinct u.lexeme from unnest(to_tsvector('english', ${text})) u order by 1)`;
  const [row] = await rowsOf<{ lexemes: string[] | null; intent: string[] | null }>(
    executor.execute(sql`select ${lexemesOf(request.text)} as lexemes, ${request.intentText === undefined ? sql`null` : lexemesOf(request.intentText)} as intent`),
  );
  const lexemes = row?.lexemes ?? [];
  const intent = row?.intent ? new Set(row.intent) : undefined;
  const counts = new Map<string, TermCount>();
  const unknown = lexemes.filter((lexeme) => !stats.termPostings.has(lexeme));
  if (unknown.length > 0) {
    // Stored counts (migration 0016) when they belong to the postings this statement reads, capped as counting caps
    // them; every lexeme not stored there is counted from its postings (term-counts.ts stores
    // every frequent one).
    const held = postingVisibleTo(request.visibility, 'c', stats.scopeSets);
    const counted = await rowsOf<{ lexeme: string; postings: number; in_names: number }>(
      executor.execute(sql`
        with stored as (
          select c.lexeme, least(coalesce(sum(c.postings) filter (where ${held}), 0), ${sql.raw(String(cap))})::int as postings,
                 least(coalesce(sum(c.in_names) filter (where ${held}), 0), ${sql.raw(String(cap))})::int as in_names
          from term_counts c
          where c.tenant_id = ${request.visibility.tenantId} and c.lexeme = any(${param(unknown)}::text[])
            and exists (select 1 from term_count_revisions r join catalog_revisions current using (tenant_id)
                      where r.tenant_id = ${request.visibility.tenantId} and r.revision = current.tools_revision)
          group by c.lexeme
        )
        select lexeme, postings, in_names from stored
        union all
        select u.lexeme, probe.postings::int, probe.in_names::int
        from (select lexeme from unnest(${param(unknown)}::text[]) l(lexeme) where lexeme not in (select lexeme from stored)) u
        cross join lateral (
          select count(*) as postings, count(*) filter (where capped.tf_a > 0) as in_names from (
            select posting.tf_a from tool_terms posting
            where ${postingVisibleTo(request.visibility, 'posting', stats.scopeSets)} and posting.lexeme = u.lexeme
            limit ${sql.raw(String(cap))}
          ) capped
        ) probe`),
    );
    for (const r of counted) counts.set(r.lexeme, { postings: Number(r.postings), inNames: Number(r.in_names) });
    for (const [lexeme, count] of counts) if (stats.termPostings.size < TERM_MEMO_ENTRIES) stats.termPostings.set(lexeme, count);
  }
  const searched = new Map<string, SearchedTerm>();
  for (const lexeme of lexemes) {
    const count = stats.termPostings.get(lexeme) ?? counts.get(lexeme) ?? { postings: 0, inNames: 0 };
    if (count.postings < cap) searched.set(lexeme, { ...count, queryWeight: !intent || intent.has(lexeme) ? 1 : QUOTED_WORD_WEIGHT });
  }
  return searched;
}

/** The whole retrieval statement: lexical leg, vector leg (with a query vector), combined. */
export function retrievalStatement(request: RetrievalRequest, terms: ReadonlyMap<string, SearchedTerm>): SQL {
  const { stats, depth } = request;
  const lexical = lexicalLeg({
    visibility: request.visibility,
    filters: request.filters,
    terms: termWeights(terms, stats.visible, request.bm25),
    nameTokens: request.nameTokens,
    scopeSets: stats.scopeSets,
    averageLength: stats.avgLength,
    bm25: request.bm25,
    depth,
  });
  if (!request.vector) return sql`with ${lexical} ${combine(undefined)}`;
  const vector = vectorLeg({ visibility: request.visibility, filters: request.filters, ...request.vector, depth });
  return sql`with ${lexical}, ${vector} ${combine(request.vector.search)}`;
}

async function runRetrieval(executor: Executor, request: RetrievalRequest, terms: ReadonlyMap<string, SearchedTerm>): Promise<Retrieval> {
  const rows = await rowsOf<Record<string, unknown>>(executor.execute(retrievalStatement(request, terms)));
  const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
  return {
    nearest: num(rows[0]?.nearest) ?? (request.vector?.search === 'index' ? 0 : null),
    candidates: rows.map((r) => ({
      toolId: Number(r.tool_id),
      lexical: num(r.lexical),
      exact: r.exact === true,
      cosine: num(r.cosine),
      calls: num(r.calls) ?? 0,
    })),
  };
}

/** Full rows of the shortlist (without the search texts, which only the index reads), re-checked against the security predicate. */
export async function shortlistRows(executor: Executor, visibility: Visibility, ids: number[]): Promise<ShortlistRow[]> {
  if (ids.length === 0) return [];
  const { searchName: _name, searchCard: _card, searchBody: _body, searchParams: _params, searchLearned: _learned, ...columns } = getTableColumns(tools);
  return executor.select(columns).from(tools).where(and(visibleTo(visibility), inArray(tools.id, ids)));
}
