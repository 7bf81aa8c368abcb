/**
 * Ranking: fuse the lexical and vector legs into one ordered shortlist whose scores are
 * calibrated probabilities. Pure functions; the measurements behind the constants are in the
 * README (npm run eval on the MetaTool dev set, fitted and checked on held-out halves).
 */
import type { Bm25Params } from './bm25f.js';

export type { Bm25Params } from './bm25f.js';

/**
 * A: name words and aliases, B: summary/tags/category, C: description/examples, D: parameters.
 * Higher k1 and lower b than the textbook 1.2/0.75, and names weighted 3x, measured better on
 * every half of the dev set; B and D could not be measured there (no such fields) and are priors.
 */
export const BM25_PARAMS: Bm25Params = { k1: 1.5, b: 0.5, weights: { A: 3, B: 2, C: 1, D: 0.5 } };

/** The evidence fusion needs about one candidate (see Candidate in repository.ts). */
export interface Evidence {
  toolId: number;
  /** BM25F score; null when the lexical leg did not return the tool. */
  lexical: number | null;
  /**
   * Share of the query's IDF mass the tool matches (0..1): query words no visible tool has count
   * at full IDF, so a request about something the catalog lacks covers little.
   */
  coverage: number;
  exact: boolean;
  cosine: number | null;
  /** Allowed calls so far; absent counts as none. */
  calls?: number;
}

/** Logistic calibration of a fused score: P(fits) = sigmoid(intercept + fused x fused + coverage x coverage). */
export interface Calibration {
  intercept: number;
  fused: number;
  coverage: number;
}

export interface FusionParams {
  /** Weight of the normalized lexical score in the fused rank score; the vector leg gets the rest. */
  lexicalWeight: number;
  /**
   * Most a popularity prior (log of allowed calls, relative to the most-called candidate) adds to
   * the fused score: enough to reorder near-ties, too little to lift an irrelevant tool.
   */
  popularityWeight: number;
  /** Calibration per ranking mode. */
  calibration: Record<RankingMode, Calibration>;
  /** Tools scoring below this are left out of the shortlist (near-certain misses). */
  minScore: number;
  /** A best score below this flags the shortlist low_confidence. */
  lowConfidenceScore: number;
  /** Query-level evidence that the catalog lacks the requested tool (hybrid only); null: the floor alone flags. */
  absence: AbsenceModel | null;
}

/**
 * Logistic evidence that no visible tool serves the request, from what a best score alone misses:
 * the logit of the best score, how far down the vector leg's order the best tool sits (log1p of its
 * 0-based cosine rank), and the cosine spread of the pool (best cosine minus the 10th best; a
 * request near many tools alike has a flat top). At or above `threshold` (a probability) the
 * shortlist is flagged low_confidence.
 */
export interface AbsenceModel {
  intercept: number;
  topScoreLogit: number;
  vectorRank: number;
  cosineSpread: number;
  threshold: number;
}

/**
 * Fitted on the dev set with 15% of its tools withheld (label: the request's tool is absent),
 * checked on 5 held-out query folds and on disjoint tool halves (README, "What score means"):
 * with the 0.05 floor it flags ~22% of absent-tool requests at ~5% of present ones, against ~15%
 * for the best score alone. The cosine spread is specific to the encoder it was fitted with (the
 * local default); another encoder keeps the floor and the rank term.
 */
export const ABSENCE_MODEL: AbsenceModel = { intercept: -1.393, topScoreLogit: -0.469, vectorRank: 0.148, cosineSpread: -5.091, threshold: 0.28 };

/**
 * Fitted by logistic regression on the dev set's top-10 candidates per query (label: the tool is
 * relevant), on one half of the queries and checked on the other (README, "What score means").
 * The cosine's absolute level added nothing once the fused score was in (its weight came out
 * negative) and is specific to one encoder, so only the encoder-independent evidence is used; the
 * vector-only mode, having no lexical evidence, uses the fused score with no coverage term.
 */
export const CALIBRATION: Record<RankingMode, Calibration> = {
  hybrid: { intercept: -8.85, fused: 9.18, coverage: 2.9 },
  lexical: { intercept: -6.73, fused: 6.03, coverage: 3.03 },
  vector: { intercept: -9.58, fused: 8.93, coverage: 0 },
};

/**
 * lexicalWeight 0.3 beat reciprocal rank fusion by ~0.03 recall@5; the floors are probabilities:
 * below 0.02 a tool was right ~1 time in 100 on held-out queries; a best score under 0.05 always
 * flags, and the absence model flags the rest of ~5% of requests whose tool is in the catalog (README).
 */
export const FUSION_PARAMS: FusionParams = {
  lexicalWeight: 0.3,
  popularityWeight: 0.02,
  calibration: CALIBRATION,
  minScore: 0.02,
  lowConfidenceScore: 0.05,
  absence: ABSENCE_MODEL,
};

export interface Ranked {
  toolId: number;
  /** Calibrated estimate that the tool fits the request (1 for an exact name match). */
  score: number;
  lexical: number | null;
  cosine: number | null;
  exact: boolean;
}

/** Which legs rank: both (default), or one alone (evaluation, debugging). */
export const RANKING_MODES = ['hybrid', 'lexical', 'vector'] as const;
export type RankingMode = (typeof RANKING_MODES)[number];

export interface Ranking {
  ranked: Ranked[];
  lowConfidence: boolean;
}

const byScore = (a: Ranked, b: Ranked): number => Number(b.exact) - Number(a.exact) || b.score - a.score || a.toolId - b.toolId;

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

/**
 * The fused rank score of each candidate, in 0..1: lexical scores divided by the best one (tools
 * without a match score 0), cosines min-max normalized over the candidate pool (both legs' top
 * candidates, each with its cosine), mixed by weight; plus the popularity prior. The pool rather
 * than the whole catalog sets the scale, so an index search that never sees the least similar
 * tools ranks the same way.
 */
export function fusedScores(evidence: readonly Evidence[], params: FusionParams, mode: RankingMode): number[] {
  const useLexical = mode !== 'vector';
  const useVector = mode !== 'lexical' && evidence.some((e) => e.cosine !== null);
  const maxLexical = useLexical ? Math.max(0, ...evidence.map((e) => e.lexical ?? 0)) : 0;
  const cosines = evidence.map((e) => e.cosine).filter((c): c is number => c !== null);
  const top = Math.max(...cosines);
  const low = Math.min(...cosines);
  const maxCalls = Math.max(0, ...evidence.map((e) => e.calls ?? 0));
  return evidence.map((e) => {
    const lexical = maxLexical > 0 ? (e.lexical ?? 0) / maxLexical : 0;
    const vector = e.cosine === null ? 0 : top > low ? (e.cosine - low) / (top - low) : 1;
    const weight = !useVector ? 1 : !useLexical ? 0 : params.lexicalWeight;
    const fused = weight * lexical + (1 - weight) * vector;
    // The prior takes its share of the 0..1 scale, so it can separate tools tied at the top.
    const popularity = maxCalls > 0 ? Math.log1p(e.calls ?? 0) / Math.log1p(maxCalls) : 0;
    return (1 - params.popularityWeight) * fused + params.popularityWeight * popularity;
  });
}

/**
 * Ranks candidates by calibrated score: the probability that the tool fits, from the fused rank
 * score and the share of the query's rare words the tool covers. Exact tool-name matches rank
 * first with score 1. Tools under `minScore` are dropped; a best score under `lowConfidenceScore`
 * flags the shortlist. Without a query vector the ranking is lexical alone, and a lexical search
 * with no matching word returns nothing.
 */
export function fuse(evidence: readonly Evidence[], params: FusionParams = FUSION_PARAMS, requested: RankingMode = 'hybrid'): Ranking {
  const hasVector = evidence.some((e) => e.cosine !== null);
  const mode: RankingMode = hasVector ? requested : 'lexical';
  const pool = mode === 'lexical' ? evidence.filter((e) => (e.lexical ?? 0) > 0 || e.exact) : evidence;
  const fused = fusedScores(pool, params, mode);
  const calibration = params.calibration[mode];
  const ranked = pool
    .map((e, i): Ranked => {
      const coverage = mode === 'vector' ? 0 : e.coverage;
      const score = e.exact ? 1 : sigmoid(calibration.intercept + calibration.fused * fused[i]! + calibration.coverage * coverage);
      return { toolId: e.toolId, score: round(score), lexical: e.lexical, cosine: e.cosine, exact: e.exact };
    })
    .filter((r) => r.exact || r.score >= params.minScore)
    .sort(byScore);
  const best = ranked[0];
  const lowConfidence = !best || best.score < params.lowConfidenceScore || (mode === 'hybrid' && !best.exact && params.absence !== null && absence(pool, best, params.absence) >= params.absence.threshold);
  return { ranked, lowConfidence };
}

/** The absence model's probability that no tool in the pool serves the request (see AbsenceModel). */
export function absence(pool: readonly Evidence[], best: Ranked, model: AbsenceModel): number {
  const cosines = pool.map((e) => e.cosine).filter((c): c is number => c !== null).sort((a, b) => b - a);
  if (cosines.length === 0 || best.cosine === null) return 0;
  const rank = cosines.filter((c) => c > best.cosine!).length;
  const spread = cosines[0]! - cosines[Math.min(9, cosines.length - 1)]!;
  const score = Math.min(Math.max(best.score, 1e-4), 1 - 1e-4);
  const logit = model.intercept + model.topScoreLogit * Math.log(score / (1 - score)) + model.vectorRank * Math.log1p(rank) + model.cosineSpread * spread;
  return sigmoid(logit);
}

const round = (x: number): number => Math.round(x * 10_000) / 10_000;
