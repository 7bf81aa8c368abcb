import { and, getTableColumns, inArray, type SQL, sql } from 'drizzle-orm';

import { type Executor, rowsOf } from '../db/client.js';
import { tools } from '../db/schema.js';
import { heldScopeSets, scopesHeld, type Visibility, visibleTo } from '../tools/access.js';
import { type Format, FORMATS } from '../tools/formats.js';
import { type Bm25Params, type SearchedTerm, type TermCount, termWeights } from '../tools/lexical/bm25f.js';
import { lexicalLeg, lexicalScoring } from '../tools/lexical/lexical-sql.js';
import { searchedTerms } from '../tools/lexical/searched-terms.js';
import type { ShortlistRow } from '../tools/views.js';
import { combine, type DiscoveryFilters, filterPredicate, lexicalTopOf, nearestVectors, vectorLeg, type VectorSearch } from './retrieval-sql.js';

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

/** The lexical leg's top `depth` (no cosines yet), and the searched words the vector statement scores its own tools with. */
export interface LexicalRetrieval {
  top: Candidate[];
  terms: ReadonlyMap<string, SearchedTerm>;
}

/** One statement's result: candidates, and how many vectors the index scan returned. */
interface Retrieval {
  candidates: Candidate[];
  /** Vectors the index scan returned (index search only). */
  nearest: number | null;
}

/** What a lexical search needs of a retrieval request (no vector: it runs while the query is embedded). */
export type LexicalRequest = Omit<RetrievalRequest, 'vector'>;

/**
 * The lexical leg on its own statement (tools/lexical/lexical-sql.ts), filtered by the security
 * predicate: it needs no query vector, so discovery runs it while the query is being embedded.
 * Its candidates are complete for a lexical search (cosine null).
 */
export async function lexicalCandidates(executor: Executor, request: LexicalRequest): Promise<LexicalRetrieval> {
  const terms = await searchedTerms(executor, request);
  const { candidates } = await runStatement(executor, lexicalStatement(request, terms));
  return { top: candidates, terms };
}

/**
 * The vector leg (retrieval-sql.ts) given the lexical leg's top: the union of each leg's top
 * `depth` with both legs' evidence for every candidate (the cosine of each lexical candidate, the
 * BM25F score of each vector candidate the lexical top left out).
 * The vector leg is exact, or for large catalogs an HNSW iterative scan (see vector-index.ts).
 */
export async function vectorCandidates(
  executor: Executor,
  request: LexicalRequest,
  lexical: LexicalRetrieval,
  vector: NonNullable<RetrievalRequest['vector']>,
): Promise<Retrieved> {
  return searchVectors(executor, request.depth, vector.search, (search) => vectorStatement({ ...request, vector: { ...vector, search } }, lexical));
}

/**
 * Both legs as one statement (`lexical_scores` read once, the vector leg's tools joined to it):
 * discovery's choice once the query vector is there anyway, and a plain lexical search without one.
 */
export async function retrieveCandidates(executor: Executor, request: RetrievalRequest): Promise<Retrieved> {
  const terms = await searchedTerms(executor, request);
  const { vector } = request;
  if (!vector) return { candidates: (await runStatement(executor, lexicalStatement(request, terms))).candidates, vectorSearch: undefined };
  return searchVectors(executor, request.depth, vector.search, (search) => combinedStatement({ ...request, vector: { ...vector, search } }, terms));
}

/**
 * Runs the statement with the vector search asked for. An HNSW index scan that returns fewer
 * vectors than asked has hit pgvector's scan bound before finding enough the caller may see (a
 * very selective filter): the exact search then runs, so filtering can never hide an authorized tool.
 */
async function searchVectors(executor: Executor, depth: number, search: VectorSearch, statement: (search: VectorSearch) => SQL): Promise<Retrieved> {
  if (search === 'index') {
    // The session settings (src/db/client.ts) make this an iterative scan.
    const viaIndex = await runStatement(executor, statement('index'));
    if ((viaIndex.nearest ?? 0) >= nearestVectors(depth)) return { candidates: viaIndex.candidates, vectorSearch: 'index' };
    return { candidates: (await runStatement(executor, statement('exact'))).candidates, vectorSearch: 'index_fallback' };
  }
  return { candidates: (await runStatement(executor, statement('exact'))).candidates, vectorSearch: 'exact' };
}

/** The lexical leg's fields of a request. */
function lexicalInput(request: LexicalRequest, terms: ReadonlyMap<string, SearchedTerm>) {
  const { stats } = request;
  return {
    visibility: request.visibility,
    filter: filterPredicate(request.filters),
    terms: termWeights(terms, stats.visible, request.bm25),
    nameTokens: request.nameTokens,
    scopeSets: stats.scopeSets,
    averageLength: stats.avgLength,
    bm25: request.bm25,
    depth: request.depth,
  };
}

/** The lexical statement: its top `depth`, each with the popularity prior. */
export function lexicalStatement(request: LexicalRequest, terms: ReadonlyMap<string, SearchedTerm>): SQL {
  return sql`with ${lexicalLeg(lexicalInput(request, terms))} ${combine(undefined)}`;
}

/** Both legs in one statement: the lexical leg's CTEs, the vector leg's, and their union. */
export function combinedStatement(request: RetrievalRequest & { vector: NonNullable<RetrievalRequest['vector']> }, terms: ReadonlyMap<string, SearchedTerm>): SQL {
  const vector = vectorLeg({ visibility: request.visibility, filters: request.filters, ...request.vector, depth: request.depth });
  return sql`with ${lexicalLeg(lexicalInput(request, terms))}, ${vector} ${combine(request.vector.search)}`;
}

/**
 * The vector statement: the lexical top comes in as values; the vector leg's tools that it left
 * out are scored lexically by point probes (lexicalScoring's `only`).
 */
export function vectorStatement(request: RetrievalRequest & { vector: NonNullable<RetrievalRequest['vector']> }, lexical: LexicalRetrieval): SQL {
  const vector = vectorLeg({ visibility: request.visibility, filters: request.filters, ...request.vector, depth: request.depth });
  const scoring = lexicalScoring(lexicalInput(request, lexical.terms), sql`select tool_id from vector_top except select tool_id from lexical_top`);
  return sql`with ${lexicalTopOf(lexical.top)}, ${vector}, ${scoring} ${combine(request.vector.search)}`;
}

async function runStatement(executor: Executor, statement: SQL): Promise<Retrieval> {
  const rows = await rowsOf<Record<string, unknown>>(executor.execute(statement));
  const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
  return {
    nearest: num(rows[0]?.nearest),
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
