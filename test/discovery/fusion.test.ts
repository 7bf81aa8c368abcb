import { describe, expect, it } from 'vitest';

import { absence, ABSENCE_MODEL, CALIBRATION, type Evidence, fuse, fusedScores,FUSION_PARAMS } from '../../src/discovery/fusion.js';

const evidence = (toolId: number, lexical: number | null, cosine: number | null, coverage = 0, exact = false): Evidence => ({
  toolId,
  lexical,
  coverage,
  exact,
  cosine,
});

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

describe('fusedScores', () => {
  // Fused scores share the 0..1 scale with the popularity prior (2%).
  const scale = 1 - FUSION_PARAMS.popularityWeight;

  it('blends normalized lexical and vector scores 0.3 / 0.7', () => {
    const fused = fusedScores([evidence(1, 10, 0.4), evidence(2, 0, 0.8), evidence(3, 5, 0.6)], FUSION_PARAMS, 'hybrid');
    // Cosines are min-max normalized over the pool: 0.4 -> 0, 0.6 -> 0.5, 0.8 -> 1.
    expect(fused[0]).toBeCloseTo(0.3 * scale, 6);
    expect(fused[1]).toBeCloseTo(0.7 * scale, 6);
    expect(fused[2]).toBeCloseTo((0.3 * 0.5 + 0.7 * 0.5) * scale, 6);
  });

  it('takes the cosine scale from the whole candidate pool, lexical candidates included', () => {
    const widened = fusedScores([evidence(1, 10, 0.6), evidence(2, 0, 0.8), evidence(3, 1, 0)], FUSION_PARAMS, 'hybrid');
    expect(widened[0]).toBeCloseTo((0.3 + 0.7 * 0.75) * scale, 6);
  });

  it('uses one leg alone when asked or when there are no vectors', () => {
    expect(fusedScores([evidence(1, 10, 0.5), evidence(2, 5, 0.7)], FUSION_PARAMS, 'lexical')).toEqual([scale, 0.5 * scale]);
    expect(fusedScores([evidence(1, 10, 0.5), evidence(2, 5, 0.7)], FUSION_PARAMS, 'vector')).toEqual([0, scale]);
    expect(fusedScores([evidence(1, 10, null), evidence(2, 5, null)], FUSION_PARAMS, 'hybrid')).toEqual([scale, 0.5 * scale]);
  });
});

describe('fuse', () => {
  it('scores each tool by the calibrated probability of its fused score and coverage', () => {
    const { ranked } = fuse([evidence(1, 10, 0.8, 0.6), evidence(2, 2, 0.5, 0.1)]);
    const { intercept, fused, coverage } = CALIBRATION.hybrid;
    const scale = 1 - FUSION_PARAMS.popularityWeight;
    expect(ranked[0]!.toolId).toBe(1);
    expect(ranked[0]!.score).toBeCloseTo(sigmoid(intercept + fused * scale + coverage * 0.6), 4);
  });

  it('means the same thing whatever the query: the top tool of a weak match scores low', () => {
    const strong = fuse([evidence(1, 12, 0.7, 0.7), evidence(2, 1, 0.3, 0.05)]);
    const weak = fuse([evidence(1, 0, 0.52), evidence(2, 0, 0.5)]);
    expect(strong.ranked[0]!.score).toBeGreaterThan(0.5);
    expect(strong.lowConfidence).toBe(false);
    expect(weak.ranked[0]!.score).toBeLessThan(0.1);
    expect(weak.lowConfidence).toBe(true);
  });

  it('flags a best score under the floor whatever the other evidence says', () => {
    const { ranked, lowConfidence } = fuse([evidence(1, 1, 0.3), evidence(2, 0, 0.1)], { ...FUSION_PARAMS, absence: null, lowConfidenceScore: 0.9 });
    expect(ranked[0]!.score).toBeLessThan(0.9);
    expect(lowConfidence).toBe(true);
  });

  // Twelve tools: one clearly closest to the request, or a flat top where several are alike.
  const pool = (top: number[], lexicalOf: (i: number) => number): Evidence[] =>
    [...top, ...Array.from({ length: 12 - top.length }, () => 0.28)].map((cosine, i) => evidence(i + 1, lexicalOf(i), cosine, 0.1));

  it('flags a shortlist whose best tool leads neither by cosine spread nor by vector rank', () => {
    const clear = fuse(pool([0.8, 0.45, 0.4], (i) => (i === 0 ? 10 : 1)));
    expect(clear.ranked[0]!.toolId).toBe(1);
    expect(clear.lowConfidence).toBe(false);
    // The best fused tool is third by cosine and the top cosines are bunched: its score clears the
    // floor, but nothing stands out.
    const flat = fuse(pool([0.33, 0.32, 0.31], (i) => (i === 2 ? 10 : 0)));
    expect(flat.ranked[0]!.toolId).toBe(3);
    expect(flat.ranked[0]!.score).toBeGreaterThanOrEqual(FUSION_PARAMS.lowConfidenceScore);
    expect(flat.lowConfidence).toBe(true);
    expect(fuse(pool([0.33, 0.32, 0.31], (i) => (i === 2 ? 10 : 0)), { ...FUSION_PARAMS, absence: null }).lowConfidence).toBe(false);
  });

  it('computes the absence probability from the best score, its vector rank and the cosine spread', () => {
    const items = pool([0.5, 0.6, 0.4], () => 1);
    const best = { toolId: 1, score: 0.3, lexical: 1, cosine: 0.5, exact: false };
    const { intercept, topScoreLogit, vectorRank, cosineSpread } = ABSENCE_MODEL;
    // Rank 1 (0.6 is above it), spread 0.6 - 0.28 (the 10th best cosine).
    const expected = sigmoid(intercept + topScoreLogit * Math.log(0.3 / 0.7) + vectorRank * Math.log(2) + cosineSpread * 0.32);
    expect(absence(items, best, ABSENCE_MODEL)).toBeCloseTo(expected, 6);
  });

  it('leaves the absence model out of lexical-only rankings', () => {
    const items = [evidence(1, 10, null, 0.9), evidence(2, 9, null, 0.9)];
    expect(fuse(items).lowConfidence).toBe(false);
  });

  it('re-ranks by coverage: the tool matching the query\'s rare words moves up', () => {
    const { ranked } = fuse([evidence(1, 10, 0.7, 0.1), evidence(2, 9, 0.7, 0.9)]);
    expect(ranked.map((r) => r.toolId)).toEqual([2, 1]);
  });

  it('drops tools under the minimum score from the shortlist', () => {
    const { ranked } = fuse([evidence(1, 10, 0.8, 0.6), evidence(2, 0, 0.1)]);
    expect(ranked.map((r) => r.toolId)).toEqual([1]);
    expect(fuse([evidence(1, 10, 0.8, 0.6), evidence(2, 0, 0.1)], { ...FUSION_PARAMS, minScore: 0 }).ranked).toHaveLength(2);
  });

  it('lets usage break ties, bounded by the prior\'s weight', () => {
    const { ranked } = fuse([evidence(1, 1, 0.7, 0.5), { ...evidence(2, 1, 0.7, 0.5), calls: 10 }, { ...evidence(3, 0, 0.1), calls: 1000 }]);
    expect(ranked.map((r) => r.toolId).slice(0, 2)).toEqual([2, 1]);
  });

  it('ranks an exact name match first with score 1 whatever the legs say', () => {
    const { ranked, lowConfidence } = fuse([evidence(1, 10, 0.8, 0.8), evidence(2, 0.1, 0.1, 0, true)]);
    expect(ranked[0]).toMatchObject({ toolId: 2, score: 1, exact: true });
    expect(lowConfidence).toBe(false);
  });

  it('ranks by lexical score alone without vectors, and returns nothing without a match', () => {
    const { ranked } = fuse([evidence(1, 1, null, 0.3), evidence(2, 4, null, 0.6)], { ...FUSION_PARAMS, minScore: 0 });
    expect(ranked.map((r) => r.toolId)).toEqual([2, 1]);
    expect(fuse([evidence(1, 0, null)])).toEqual({ ranked: [], lowConfidence: true });
  });

  it('ranks by one leg when asked', () => {
    const items = [evidence(1, 10, 0.5, 0.5), evidence(2, 1, 0.7, 0.1)];
    const all = { ...FUSION_PARAMS, minScore: 0 };
    expect(fuse(items, all, 'lexical').ranked.map((r) => r.toolId)).toEqual([1, 2]);
    expect(fuse(items, all, 'vector').ranked.map((r) => r.toolId)[0]).toBe(2);
  });

  it('breaks ties by tool id so rankings are deterministic', () => {
    expect(fuse([evidence(7, 1, 0.5, 0.5), evidence(3, 1, 0.5, 0.5)]).ranked.map((r) => r.toolId)).toEqual([3, 7]);
  });
});
