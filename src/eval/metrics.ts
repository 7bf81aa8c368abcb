/** Retrieval metrics over ranked name lists; pure. */

export interface QueryOutcome {
  ranked: string[];
  relevant: string[];
}

export interface RetrievalMetrics {
  queries: number;
  recall1: number;
  recall3: number;
  recall5: number;
  mrr: number;
  ndcg5: number;
}

/** 1 when any relevant tool is in the top k (the dataset's definition of a hit). */
export function hitAt(outcome: QueryOutcome, k: number): number {
  return outcome.ranked.slice(0, k).some((name) => outcome.relevant.includes(name)) ? 1 : 0;
}

/** Reciprocal rank of the first relevant tool, 0 when none was returned. */
export function reciprocalRank(outcome: QueryOutcome): number {
  const index = outcome.ranked.findIndex((name) => outcome.relevant.includes(name));
  return index < 0 ? 0 : 1 / (index + 1);
}

/** Binary-relevance nDCG@k. */
export function ndcgAt(outcome: QueryOutcome, k: number): number {
  const dcg = outcome.ranked.slice(0, k).reduce((sum, name, i) => sum + (outcome.relevant.includes(name) ? 1 / Math.log2(i + 2) : 0), 0);
  let ideal = 0;
  for (let i = 0; i < Math.min(k, outcome.relevant.length); i += 1) ideal += 1 / Math.log2(i + 2);
  return ideal === 0 ? 0 : dcg / ideal;
}

const mean = (values: number[]): number => (values.length === 0 ? 0 : values.reduce((a, b) => a + b, 0) / values.length);

export function summarize(outcomes: QueryOutcome[]): RetrievalMetrics {
  return {
    queries: outcomes.length,
    recall1: mean(outcomes.map((o) => hitAt(o, 1))),
    recall3: mean(outcomes.map((o) => hitAt(o, 3))),
    recall5: mean(outcomes.map((o) => hitAt(o, 5))),
    mrr: mean(outcomes.map(reciprocalRank)),
    ndcg5: mean(outcomes.map((o) => ndcgAt(o, 5))),
  };
}
