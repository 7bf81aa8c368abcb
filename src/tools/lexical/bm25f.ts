/**
 * BM25F over the registry's postings, in TypeScript: the reference the lexical leg's SQL
 * (lexical-sql.ts) is tested against, and what the evaluation's method comparisons compute with.
 * Tokenizing and stemming stay PostgreSQL's (`to_tsvector('english')`); this module starts from
 * the postings that tokenizing produced.
 */

/** The four weighted fields of a card: A name and aliases, B summary/tags/category/learned, C description/examples, D parameters. */
export type FieldVector = readonly [number, number, number, number];

/** BM25F parameters: saturation k1, length normalization b, weight per field (A to D). */
export interface Bm25Params {
  k1: number;
  b: number;
  weights: { A: number; B: number; C: number; D: number };
}

/**
 * A: name words and aliases, B: summary/tags/category, C: description/examples, D: parameters.
 * Higher k1 and lower b than the textbook 1.2/0.75, and names weighted 3x, measured better on
 * every half of the MetaTool dev set; on dev-mcp other weightings moved R@1 by under 0.01.
 */
export const BM25_PARAMS: Bm25Params = { k1: 1.5, b: 0.5, weights: { A: 3, B: 2, C: 1, D: 0.5 } };

/** One lexeme of one tool: occurrences per field, and the tool's field lengths. */
export interface Posting {
  toolId: number;
  lexeme: string;
  tf: FieldVector;
  length: FieldVector;
}

/**
 * A word found in the name of at least this many visible tools and nowhere else in any of them
 * is a namespace (the server prefix of imported MCP tools, `everything_`, `github_`): it names
 * where tools come from, not what they do, so it is no lexical evidence (weighing it like
 * description text still let "forget everything about Bob" pull every `everything_` tool ahead
 * of the memory deletion: with no other word matching, it set the lexical scale alone).
 */
const NAMESPACE_MIN_TOOLS = 3;

/** Whether a lexeme's postings make it a namespace word (see NAMESPACE_MIN_TOOLS). */
export function isNamespace(postings: readonly Pick<Posting, 'tf'>[]): boolean {
  return isNamespaceCount({ postings: postings.length, inNames: postings.filter((p) => p.tf[0] > 0).length });
}

/** How many visible tools a lexeme's postings cover, and how many of those have it in the name. */
export interface TermCount {
  postings: number;
  inNames: number;
}

const isNamespaceCount = (count: TermCount): boolean => count.inNames >= NAMESPACE_MIN_TOOLS && count.inNames === count.postings;

/**
 * How much a query word found only inside quoted values counts against one of the request's own
 * words (query.ts, withoutQuotedValues): quoted text names arguments, not the tool, but sometimes
 * the thing acted on ("the 'products' index"). 0.25 measured best with 0 and 0.5 close (dev-mcp
 * lexical R@1 0.831 -> 0.849, dev-data unchanged: docs/ranking.md).
 */
export const QUOTED_WORD_WEIGHT = 0.25;

/** A searched lexeme's visible counts and its weight in the request (1, or QUOTED_WORD_WEIGHT). */
export interface SearchedTerm extends TermCount {
  queryWeight: number;
}

/** What one searched lexeme weighs: its IDF (times its weight in the request), and the name field's weight (0 for a namespace word). */
export interface TermWeight {
  lexeme: string;
  idf: number;
  nameWeight: number;
  /** The lexeme has postings among what the caller sees. */
  present: boolean;
}

/** Each searched lexeme's weight from its visible counts and its weight in the request. */
export function termWeights(terms: ReadonlyMap<string, SearchedTerm>, visible: number, params: Bm25Params): TermWeight[] {
  return [...terms].map(([lexeme, term]) => ({
    lexeme,
    idf: idf(visible, term.postings) * term.queryWeight,
    nameWeight: isNamespaceCount(term) ? 0 : params.weights.A,
    present: term.postings > 0,
  }));
}

/**
 * Words in more than this share of a large catalog are left out of the lexical leg: their IDF
 * (under ~1.6) cannot outweigh the rare words that decide the ranking, and their postings are most
 * of what the leg would read. Small catalogs (under MIN_COMMON_TERM_POSTINGS / share tools) keep
 * every word, where a word in many tools still separates them ("order" among 8 order tools).
 */
const COMMON_TERM_SHARE = 0.2;
const MIN_COMMON_TERM_POSTINGS = 200;

/** Postings of a word, among what the caller sees, from which it counts as common and is not searched. */
export function commonTermPostings(visible: number): number {
  return Math.max(MIN_COMMON_TERM_POSTINGS, Math.ceil(COMMON_TERM_SHARE * visible));
}

/** Robertson-Sparck Jones IDF as BM25 uses it, floored at 0 for terms in most tools. */
export function idf(visible: number, documentFrequency: number): number {
  const n = Math.max(visible, documentFrequency);
  return Math.log(1 + (n - documentFrequency + 0.5) / (documentFrequency + 0.5));
}

/**
 * A lexeme's weighted, length-normalized term frequency over the fields, saturated once (BM25F:
 * the fields are pooled before saturation, so a word repeated in the description cannot outweigh
 * one occurrence in the name).
 */
function saturatedTf(posting: Pick<Posting, 'tf' | 'length'>, averageLength: FieldVector, params: Bm25Params, namespace = false): number {
  const weights = [namespace ? 0 : params.weights.A, params.weights.B, params.weights.C, params.weights.D];
  let tf = 0;
  for (let field = 0; field < 4; field += 1) {
    const norm = 1 - params.b + (params.b * posting.length[field]!) / Math.max(averageLength[field]!, 1);
    tf += (weights[field]! * posting.tf[field]!) / norm;
  }
  return (tf * (params.k1 + 1)) / (tf + params.k1);
}

/**
 * BM25F score per tool for a query's distinct lexemes (or lexemes with their weight in the
 * request), over the postings of what the caller may see (`visible` tools, their average field
 * lengths), namespace words weighed down in names and common words of large catalogs left out.
 * Tools matching no lexeme are absent.
 */
export function bm25fScores(
  postings: readonly Posting[],
  queryLexemes: readonly string[] | ReadonlyMap<string, number>,
  visible: number,
  averageLength: FieldVector,
  params: Bm25Params,
): Map<number, number> {
  const queryWeights: ReadonlyMap<string, number> = Array.isArray(queryLexemes) ? new Map(queryLexemes.map((l) => [l, 1])) : (queryLexemes as ReadonlyMap<string, number>);
  const wanted = new Set(queryWeights.keys());
  const byLexeme = new Map<string, Posting[]>();
  for (const posting of postings) {
    if (!wanted.has(posting.lexeme)) continue;
    const list = byLexeme.get(posting.lexeme) ?? [];
    list.push(posting);
    byLexeme.set(posting.lexeme, list);
  }
  const scores = new Map<number, number>();
  for (const list of byLexeme.values()) {
    if (list.length >= commonTermPostings(visible)) continue;
    const weight = idf(visible, list.length) * (queryWeights.get(list[0]!.lexeme) ?? 1);
    const namespace = isNamespace(list);
    for (const posting of list) scores.set(posting.toolId, (scores.get(posting.toolId) ?? 0) + weight * saturatedTf(posting, averageLength, params, namespace));
  }
  return scores;
}
