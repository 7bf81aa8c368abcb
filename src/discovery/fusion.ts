/**
 * Ranking: fuse the lexical and vector legs into one ordered shortlist whose scores are
 * calibrated probabilities. Pure functions; the measurements behind the constants are in
 * docs/ranking.md (npm run eval on both dev sets, every constant checked on each set alone).
 */
import { DISCOVERY_SCORE_DEFAULTS } from '../config.js';

/** The evidence fusion needs about one candidate (see Candidate in repository.ts). */
export interface Evidence {
  toolId: number;
  /** BM25F score; null when the lexical leg did not return the tool. */
  lexical: number | null;
  exact: boolean;
  /** Best cosine over the tool's vectors; null when it has none yet. */
  cosine: number | null;
  /** Allowed calls so far; absent counts as none. */
  calls?: number;
}

/**
 * Logistic calibration: P(fits) = sigmoid(intercept + standout x the candidate's fused standout +
 * cosine x its cosine). The standout is relative to the request's pool; the cosine is the one
 * absolute measure of fit, which a small catalog needs (among five tools, three of them alike, the
 * right one hardly stands out). The cosine weight was fitted with the local encoder.
 */
interface Calibration {
  intercept: number;
  standout: number;
  cosine: number;
}

export interface FusionParams {
  /**
   * Most a popularity prior (log of allowed calls, relative to the most-called candidate) adds to
   * the standout: enough to reorder near-ties, too little to lift an irrelevant tool.
   */
  popularityWeight: number;
  /** Calibration per ranking mode. */
  calibration: Record<RankingMode, Calibration>;
  /** Tools scoring below this are left out of the shortlist (near-certain misses). */
  minScore: number;
  /** A best score below this flags the shortlist low_confidence. */
  lowConfidenceScore: number;
}

/**
 * Fitted by logistic regression on the top-10 candidates of every request of both dev sets
 * (label: the tool is relevant; each set weighted equally), and checked on catalogs of 8, 25 and
 * 75 tools drawn from them (docs/ranking.md, "What score means").
 */
export const CALIBRATION: Record<RankingMode, Calibration> = {
  hybrid: { intercept: -5.73, standout: 1.19, cosine: 1.33 },
  lexical: { intercept: -4.98, standout: 0.66, cosine: 0 },
  vector: { intercept: -7.81, standout: 1.29, cosine: 4.58 },
};

/** The service's defaults: the score floors are configuration (DISCOVERY_MIN_SCORE, DISCOVERY_LOW_CONFIDENCE_SCORE). */
export const FUSION_PARAMS: FusionParams = {
  popularityWeight: 0.1,
  calibration: CALIBRATION,
  ...DISCOVERY_SCORE_DEFAULTS,
};

/** Most standard deviations a candidate can stand out. */
const STANDOUT_CAP = 10;

/**
 * How far a value stands out when all the others score alike (no spread to measure against): the
 * one tool matching any word of the request, say. Half the cap: in a small catalog one match on a
 * common verb ("add 2 and 3" against the one `add_` tool) must not outweigh a clear vector match;
 * whole dev-set catalogs rank the same with 3, 5 or 10 (docs/ranking.md).
 */
const FLAT_STANDOUT = 5;

/**
 * Tools matching no word of the request that every lexical pool counts among the others, whatever
 * the catalog's size: what an unrelated tool scores. In a catalog of a handful of tools, all alike,
 * the one that matches still stands out against them; in a large one ten more zeros change nothing
 * (on catalogs of 8 tools: requests whose tool is there flagged 13% -> 6% on dev-mcp, 18% -> 15% on
 * MetaTool; whole catalogs unchanged: docs/ranking.md).
 */
export const LEXICAL_BACKGROUND = 10;

/**
 * The least spread of cosines a standout is measured against. Over a request's pool of 100-200
 * candidates the cosines' standard deviation is 0.055-0.12 (5th-95th percentile, both dev sets);
 * among two or three tools it can be near 0, and one of two look-alikes would stand out by the cap.
 */
export const MIN_COSINE_DEVIATION = 0.05;

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

/** What fusion knows about the caller's catalog and request beyond the candidates. */
interface PoolContext {
  /**
   * How many tools a lexical-only pool stands for: candidates without a matching word are not
   * returned, so their zeros are added back up to this many (the size of a hybrid pool, or the
   * whole catalog when smaller) and a lexical standout means what it means in a hybrid pool.
   */
  lexicalPool: number;
  /** The request names several steps (requestSteps in query.ts): its pools weigh the lexical leg at STEPS_LEXICAL_WEIGHT. */
  steps?: boolean;
}

/**
 * The lexical leg's share of the fused standout for a request naming several steps, whose every
 * pool (the whole request's and each step's) is fused this way; any other request weighs both legs
 * equally. One vector of a request asking for three things lies between three tools and near none,
 * while each step's words still match its own tool. On dev-mcp's multi-step requests (244) R@1
 * 0.963 -> 0.969 within one server and 0.614 -> 0.663 across servers, flat from 0.7 to 0.8; the
 * few such requests of dev-data do not move (docs/ranking.md, "Methods tried").
 */
export const STEPS_LEXICAL_WEIGHT = 0.7;

const byScore = (a: Ranked, b: Ranked): number => Number(b.exact) - Number(a.exact) || b.score - a.score || a.toolId - b.toolId;

const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

/**
 * How far each value stands above the others, in their standard deviations (a leave-one-out
 * z-score), capped at ±STANDOUT_CAP (±FLAT_STANDOUT when the others have no spread); `padding` more values of 0 count among the others, and their
 * deviation is taken as at least `minDeviation`. Scale-free, so a BM25 score and a cosine become
 * comparable, and one outlier in a small catalog is not held down by its own weight in the mean
 * (which bounds a plain z-score by (n-1)/sqrt(n)).
 */
export function standouts(values: readonly number[], padding = 0, minDeviation = 0): number[] {
  const n = values.length + padding;
  if (n < 2) return values.map(() => 0);
  let sum = 0;
  let squares = 0;
  for (const x of values) {
    sum += x;
    squares += x * x;
  }
  return values.map((x) => {
    const mean = (sum - x) / (n - 1);
    const variance = Math.max((squares - x * x) / (n - 1) - mean * mean, minDeviation * minDeviation);
    const z = variance > 1e-12 ? (x - mean) / Math.sqrt(variance) : x > mean ? FLAT_STANDOUT : x < mean ? -FLAT_STANDOUT : 0;
    return Math.min(STANDOUT_CAP, Math.max(-STANDOUT_CAP, z));
  });
}

/**
 * Each candidate's fused standout: the mean of its standouts in the legs the mode uses (a tool
 * without a lexical match scores 0 there; one without a vector yet, the pool's lowest cosine),
 * weighted toward the lexical leg for a request naming steps, plus the popularity prior. Equal
 * weights otherwise measured as good as any fixed or per-request weighting on both dev sets
 * (docs/ranking.md): standardizing already lets the decisive leg count more.
 */
export function fusedScores(evidence: readonly Evidence[], params: FusionParams, mode: RankingMode, context: PoolContext): number[] {
  const useLexical = mode !== 'vector';
  const useVector = mode !== 'lexical' && evidence.some((e) => e.cosine !== null);
  const legs: number[][] = [];
  if (useLexical) {
    const padding = LEXICAL_BACKGROUND + (useVector ? 0 : Math.max(0, context.lexicalPool - evidence.length));
    legs.push(standouts(evidence.map((e) => e.lexical ?? 0), padding));
  }
  if (useVector) {
    const lowest = Math.min(...evidence.map((e) => e.cosine ?? Infinity));
    legs.push(standouts(evidence.map((e) => e.cosine ?? lowest), 0, MIN_COSINE_DEVIATION));
  }
  // Both legs: equal shares, or the lexical leg's larger one for a request naming steps.
  const shares = legs.length === 2 ? (context.steps ? [STEPS_LEXICAL_WEIGHT, 1 - STEPS_LEXICAL_WEIGHT] : [0.5, 0.5]) : [1];
  const maxCalls = Math.max(0, ...evidence.map((e) => e.calls ?? 0));
  return evidence.map((e, i) => {
    const fused = legs.reduce((sum, leg, l) => sum + shares[l]! * leg[i]!, 0);
    const popularity = maxCalls > 0 ? Math.log1p(e.calls ?? 0) / Math.log1p(maxCalls) : 0;
    return fused + params.popularityWeight * popularity;
  });
}

/**
 * Ranks candidates by calibrated score: the probability that the tool fits, from how far it
 * stands out of the request's candidate pool and how close its vector is. Exact tool-name matches rank first with score 1.
 * Tools under `minScore` are dropped unless they score at least half the best; a best score under `lowConfidenceScore` flags the
 * shortlist. Without a query vector the ranking is lexical alone, and a lexical search with no
 * matching word returns nothing.
 */
export function fuse(evidence: readonly Evidence[], params: FusionParams = FUSION_PARAMS, requested: RankingMode = 'hybrid', context: PoolContext = { lexicalPool: evidence.length }): Ranking {
  const hasVector = evidence.some((e) => e.cosine !== null);
  const mode: RankingMode = hasVector ? requested : 'lexical';
  const pool = mode === 'lexical' ? evidence.filter((e) => (e.lexical ?? 0) > 0 || e.exact) : evidence;
  const fused = fusedScores(pool, params, mode, context);
  const calibration = params.calibration[mode];
  const lowest = Math.min(...pool.map((e) => e.cosine ?? Infinity));
  const ranked = pool
    .map((e, i): Ranked => {
      const cosine = mode === 'lexical' ? 0 : (e.cosine ?? lowest);
      const score = e.exact ? 1 : sigmoid(calibration.intercept + calibration.standout * fused[i]! + calibration.cosine * cosine);
      return { toolId: e.toolId, score: round(score), lexical: e.lexical, cosine: e.cosine, exact: e.exact };
    })
    .sort(byScore);
  const best = ranked[0];
  // A tool scoring at least half the best is kept under the floor: a near-tie with the leader is
  // no certain miss (three look-alike tools, all the caller may see, score alike and low).
  const kept = ranked.filter((r) => r.exact || r.score >= params.minScore || r.score >= best!.score / 2);
  return { ranked: kept, lowConfidence: !best || best.score < params.lowConfidenceScore };
}

const round = (x: number): number => Math.round(x * 10_000) / 10_000;

/**
 * One ranking from several of the same pool's rankings (a request's and each of its steps'): each
 * tool at its best score, so every step's clear winner reaches the shortlist. The shortlist is
 * low-confidence only when every part found nothing clear.
 */
export function mergeRankings(rankings: readonly Ranking[]): Ranking {
  if (rankings.length === 1) return rankings[0]!;
  const best = new Map<number, Ranked>();
  for (const { ranked } of rankings) {
    for (const r of ranked) {
      const seen = best.get(r.toolId);
      if (!seen || byScore(r, seen) < 0) best.set(r.toolId, r);
    }
  }
  return { ranked: [...best.values()].sort(byScore), lowConfidence: rankings.every((r) => r.lowConfidence) };
}
