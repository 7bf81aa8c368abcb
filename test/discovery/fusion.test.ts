import { describe, expect, it } from 'vitest';

import { CALIBRATION, type Evidence, fuse, fusedScores, FUSION_PARAMS, LEXICAL_BACKGROUND, mergeRankings, MIN_COSINE_DEVIATION, type Ranked, standouts, STEPS_LEXICAL_WEIGHT } from '../../src/discovery/fusion.js';

const evidence = (toolId: number, lexical: number | null, cosine: number | null, exact = false): Evidence => ({ toolId, lexical, exact, cosine });

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sd = (xs: number[]) => Math.sqrt(mean(xs.map((x) => (x - mean(xs)) ** 2)));
/** The leave-one-out z-score written out: the value against the others' mean and deviation. */
const againstOthers = (xs: number[], i: number) => {
  const others = xs.filter((_, j) => j !== i);
  return (xs[i]! - mean(others)) / sd(others);
};

describe('standouts', () => {
  it('measures each value against the others, in their standard deviations', () => {
    const xs = [3, 1, 2, 0.5, 1.5];
    standouts(xs).forEach((z, i) => expect(z).toBeCloseTo(againstOthers(xs, i), 9));
  });

  it('lets one clear outlier of a small pool stand out (a plain z-score cannot pass (n-1)/sqrt(n))', () => {
    const [top] = standouts([0.7, 0.3, 0.25, 0.2, 0.2]);
    expect(top).toBeGreaterThan(5);
  });

  it('counts padding zeros among the others, and gives a value above a flat rest half the cap', () => {
    expect(standouts([4], 9)[0]).toBe(5);
    const padded = standouts([4, 2], 3);
    expect(padded[0]).toBeCloseTo(againstOthers([4, 2, 0, 0, 0], 0), 9);
    expect(standouts([1, 1, 1])).toEqual([0, 0, 0]);
    expect(standouts([5])).toEqual([0]);
  });

  it('measures against at least the given deviation, so one of two look-alikes does not stand out by the cap', () => {
    expect(standouts([0.61, 0.6])).toEqual([5, -5]);
    const [a, b] = standouts([0.61, 0.6], 0, 0.05);
    expect(a).toBeCloseTo(0.2, 9);
    expect(b).toBeCloseTo(-0.2, 9);
  });
});

describe('fusedScores', () => {
  const context = { lexicalPool: 3 };

  it('averages the lexical (against a background of unmatched tools) and vector standouts of each candidate', () => {
    const items = [evidence(1, 10, 0.4), evidence(2, 0, 0.8), evidence(3, 5, 0.6)];
    const fused = fusedScores(items, FUSION_PARAMS, 'hybrid', context);
    const lexical = standouts([10, 0, 5], LEXICAL_BACKGROUND);
    const vector = standouts([0.4, 0.8, 0.6], 0, MIN_COSINE_DEVIATION);
    fused.forEach((f, i) => expect(f).toBeCloseTo((lexical[i]! + vector[i]!) / 2, 9));
  });

  it('weighs the lexical leg at STEPS_LEXICAL_WEIGHT for a request naming steps, so a tool its words pick outranks one its blended vector leans to', () => {
    // Tool 1: the words of one step name it; tool 2: the request's one vector lies nearest to it.
    const items = [evidence(1, 10, 0.45), evidence(2, 6, 0.6), evidence(3, 3, 0.45), evidence(4, 0, 0.4), evidence(5, 1, 0.42)];
    const lexical = standouts([10, 6, 3, 0, 1], LEXICAL_BACKGROUND);
    const vector = standouts([0.45, 0.6, 0.45, 0.4, 0.42], 0, MIN_COSINE_DEVIATION);
    const steps = fusedScores(items, FUSION_PARAMS, 'hybrid', { ...context, steps: true });
    steps.forEach((f, i) => expect(f).toBeCloseTo(STEPS_LEXICAL_WEIGHT * lexical[i]! + (1 - STEPS_LEXICAL_WEIGHT) * vector[i]!, 9));
    const order = (ranking: { ranked: Ranked[] }) => ranking.ranked.map((r) => r.toolId);
    expect(order(fuse(items, FUSION_PARAMS, 'hybrid', context))[0]).toBe(2);
    expect(order(fuse(items, FUSION_PARAMS, 'hybrid', { ...context, steps: true }))[0]).toBe(1);
    // One leg alone is that leg, steps or not.
    expect(fusedScores(items, FUSION_PARAMS, 'lexical', { lexicalPool: 5, steps: true })).toEqual(fusedScores(items, FUSION_PARAMS, 'lexical', { lexicalPool: 5 }));
  });

  it('is scale-free: multiplying a leg changes nothing', () => {
    const items = [evidence(1, 10, 0.4), evidence(2, 0, 0.8), evidence(3, 5, 0.6)];
    const scaled = items.map((e) => ({ ...e, lexical: e.lexical! * 100 }));
    const a = fusedScores(items, FUSION_PARAMS, 'hybrid', context);
    fusedScores(scaled, FUSION_PARAMS, 'hybrid', context).forEach((f, i) => expect(f).toBeCloseTo(a[i]!, 9));
  });

  it('scores a tool without a vector yet at the pool\'s lowest cosine', () => {
    const withPending = fusedScores([evidence(1, 10, null), evidence(2, 0, 0.8), evidence(3, 5, 0.6)], FUSION_PARAMS, 'hybrid', context);
    const atLowest = fusedScores([evidence(1, 10, 0.6), evidence(2, 0, 0.8), evidence(3, 5, 0.6)], FUSION_PARAMS, 'hybrid', context);
    withPending.forEach((f, i) => expect(f).toBeCloseTo(atLowest[i]!, 9));
  });

  it('uses one leg alone when asked or when there are no vectors, padding a lexical pool with zeros', () => {
    const items = [evidence(1, 10, 0.5), evidence(2, 5, 0.7)];
    expect(fusedScores(items, FUSION_PARAMS, 'lexical', { lexicalPool: 6 })).toEqual(standouts([10, 5], LEXICAL_BACKGROUND + 4));
    expect(fusedScores(items, FUSION_PARAMS, 'vector', context)).toEqual(standouts([0.5, 0.7], 0, MIN_COSINE_DEVIATION));
    expect(fusedScores([evidence(1, 10, null), evidence(2, 5, null)], FUSION_PARAMS, 'hybrid', { lexicalPool: 6 })).toEqual(standouts([10, 5], LEXICAL_BACKGROUND + 4));
  });
});

describe('fuse', () => {
  // Twenty tools: a spread of weak matches, then what the test puts on top.
  const background = (from: number): Evidence[] => Array.from({ length: 20 }, (_, i) => evidence(from + i, (i % 5) * 0.4, 0.2 + (i % 7) * 0.02));

  it('scores each tool by the calibrated probability of its fused standout', () => {
    const items = [evidence(1, 12, 0.8), ...background(10)];
    const { ranked } = fuse(items);
    const fused = fusedScores(items, FUSION_PARAMS, 'hybrid', { lexicalPool: items.length })[0]!;
    expect(ranked[0]!.toolId).toBe(1);
    const { intercept, standout, cosine } = CALIBRATION.hybrid;
    expect(ranked[0]!.score).toBeCloseTo(sigmoid(intercept + standout * fused + cosine * 0.8), 4);
  });

  it('means the same thing whatever the query: a tool that stands out scores high, a flat top low and flagged', () => {
    const strong = fuse([evidence(1, 12, 0.8), ...background(10)]);
    expect(strong.ranked[0]!.score).toBeGreaterThan(0.5);
    expect(strong.lowConfidence).toBe(false);
    const flat = fuse(background(10));
    expect(flat.lowConfidence).toBe(true);
    expect(flat.ranked[0]?.score ?? 0).toBeLessThan(FUSION_PARAMS.lowConfidenceScore);
  });

  it('returns tools that all match alike when nothing else is visible', () => {
    const { ranked } = fuse([evidence(1, 5, null), evidence(2, 5, null), evidence(3, 5, null)], FUSION_PARAMS, 'lexical', { lexicalPool: 3 });
    expect(ranked.map((r) => r.toolId)).toEqual([1, 2, 3]);
  });

  it('does not hold a clear winner of a tiny catalog down to low confidence', () => {
    const { ranked, lowConfidence } = fuse([evidence(1, 8, 0.7), evidence(2, 0, 0.3), evidence(3, 0, 0.25), evidence(4, 0.5, 0.2)]);
    expect(ranked[0]!.toolId).toBe(1);
    expect(lowConfidence).toBe(false);
  });

  it('flags a best score under the floor', () => {
    const { ranked, lowConfidence } = fuse([evidence(1, 12, 0.8), ...background(10)], { ...FUSION_PARAMS, lowConfidenceScore: 1 });
    expect(ranked[0]!.score).toBeLessThan(1);
    expect(lowConfidence).toBe(true);
  });

  it('drops tools under the minimum score from the shortlist', () => {
    const items = [evidence(1, 12, 0.8), ...background(10)];
    const kept = fuse(items).ranked;
    expect(kept.length).toBeLessThan(items.length);
    expect(kept.every((r) => r.score >= FUSION_PARAMS.minScore)).toBe(true);
    expect(fuse(items, { ...FUSION_PARAMS, minScore: 0 }).ranked).toHaveLength(items.length);
  });

  it('keeps a tool under the floor that scores at least half the best: look-alikes all low', () => {
    const items = [evidence(1, 5, 0.3), evidence(2, 5, 0.3), evidence(3, 5, 0.3)];
    const { ranked, lowConfidence } = fuse(items);
    expect(ranked[0]!.score).toBeLessThan(FUSION_PARAMS.minScore);
    expect(ranked.map((r) => r.toolId)).toEqual([1, 2, 3]);
    expect(lowConfidence).toBe(true);
  });

  it('lets usage break ties, bounded by the prior\'s weight', () => {
    const tied = [evidence(1, 6, 0.6), { ...evidence(2, 6, 0.6), calls: 10 }, { ...evidence(3, 0, 0.2), calls: 1000 }, ...background(10)];
    const { ranked } = fuse(tied);
    expect(ranked.map((r) => r.toolId).slice(0, 2)).toEqual([2, 1]);
    expect(ranked.map((r) => r.toolId)).not.toContain(3);
  });

  it('ranks an exact name match first with score 1 whatever the legs say', () => {
    const { ranked, lowConfidence } = fuse([evidence(1, 12, 0.8), evidence(2, 0.1, 0.1, true), ...background(10)]);
    expect(ranked[0]).toMatchObject({ toolId: 2, score: 1, exact: true });
    expect(lowConfidence).toBe(false);
  });

  it('ranks by lexical score alone without vectors, and returns nothing without a match', () => {
    const { ranked } = fuse([evidence(1, 1, null), evidence(2, 4, null)], { ...FUSION_PARAMS, minScore: 0 }, 'hybrid', { lexicalPool: 40 });
    expect(ranked.map((r) => r.toolId)).toEqual([2, 1]);
    expect(fuse([evidence(1, 0, null)])).toEqual({ ranked: [], lowConfidence: true });
  });

  it('ranks by one leg when asked', () => {
    const items = [evidence(1, 10, 0.5), evidence(2, 1, 0.7), ...background(10)];
    const all = { ...FUSION_PARAMS, minScore: 0 };
    expect(fuse(items, all, 'lexical', { lexicalPool: items.length }).ranked.map((r) => r.toolId)[0]).toBe(1);
    expect(fuse(items, all, 'vector').ranked.map((r) => r.toolId)[0]).toBe(2);
  });

  it('breaks ties by tool id so rankings are deterministic', () => {
    expect(fuse([evidence(7, 6, 0.6), evidence(3, 6, 0.6), ...background(10)]).ranked.map((r) => r.toolId).slice(0, 2)).toEqual([3, 7]);
  });
});

describe('mergeRankings', () => {
  const ranked = (toolId: number, score: number, exact = false): Ranked => ({ toolId, score, lexical: 1, cosine: 0.5, exact });

  it('keeps each tool at its best score, so the clear winner of every part ranks high', () => {
    const whole = { ranked: [ranked(9, 0.5), ranked(1, 0.3), ranked(2, 0.2)], lowConfidence: false };
    const first = { ranked: [ranked(1, 0.8), ranked(9, 0.4)], lowConfidence: false };
    const second = { ranked: [ranked(2, 0.7), ranked(3, 0.1)], lowConfidence: false };
    const merged = mergeRankings([whole, first, second]);
    expect(merged.ranked.map((r) => [r.toolId, r.score])).toEqual([[1, 0.8], [2, 0.7], [9, 0.5], [3, 0.1]]);
    expect(merged.lowConfidence).toBe(false);
  });

  it('puts exact name matches first and is low-confidence only when every part is', () => {
    const merged = mergeRankings([{ ranked: [ranked(4, 0.9)], lowConfidence: true }, { ranked: [ranked(5, 0.2, true)], lowConfidence: true }]);
    expect(merged.ranked.map((r) => r.toolId)).toEqual([5, 4]);
    expect(merged.lowConfidence).toBe(true);
    expect(mergeRankings([{ ranked: [], lowConfidence: true }, { ranked: [ranked(6, 0.9)], lowConfidence: false }]).lowConfidence).toBe(false);
  });
});
