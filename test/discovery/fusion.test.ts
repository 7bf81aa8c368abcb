import { describe, expect, it } from 'vitest';

import { CALIBRATION, type Evidence, fuse, fusedScores, FUSION_PARAMS } from '../../src/discovery/fusion.js';

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
    expect(weak.ranked[0]!.score).toBeLessThan(FUSION_PARAMS.lowConfidenceScore);
    expect(weak.lowConfidence).toBe(true);
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
