import { describe, expect, it } from 'vitest';

import { type Evidence, FUSION_PARAMS, fuse } from '../../src/discovery/fusion.js';

const evidence = (toolId: number, lexical: number | null, cosine: number | null, exact = false): Evidence => ({
  toolId,
  lexical,
  exact,
  cosine,
});

describe('fuse', () => {
  // Scores share the 0..1 scale with the popularity prior (2%).
  const scale = 1 - FUSION_PARAMS.popularityWeight;

  it('blends normalized lexical and vector scores 0.3 / 0.7', () => {
    const { ranked } = fuse([evidence(1, 10, 0.4), evidence(2, 0, 0.8), evidence(3, 5, 0.6)]);
    expect(ranked.map((r) => r.toolId)).toEqual([2, 3, 1]);
    expect(ranked[0]!.score).toBeCloseTo(0.7 * scale, 4);
    // Cosines are min-max normalized over the pool: 0.4 -> 0, 0.6 -> 0.5, 0.8 -> 1.
    expect(ranked[1]!.score).toBeCloseTo((0.3 * 0.5 + 0.7 * 0.5) * scale, 4);
    expect(ranked[2]!.score).toBeCloseTo(0.3 * scale, 4);
  });

  it('takes the cosine scale from the whole candidate pool, lexical candidates included', () => {
    const pool = [evidence(1, 10, 0.6), evidence(2, 0, 0.8)];
    // A weak lexical candidate widens the cosine span, so lexical evidence weighs relatively more.
    const widened = fuse([...pool, evidence(3, 1, 0)]).ranked;
    expect(fuse(pool).ranked.map((r) => r.toolId)).toEqual([2, 1]);
    expect(widened.map((r) => r.toolId)).toEqual([1, 2, 3]);
    expect(widened[0]!.score).toBeCloseTo((0.3 + 0.7 * 0.75) * scale, 4);
  });

  it('lets usage break ties, bounded by the prior\'s weight', () => {
    const tied = [evidence(1, 1, 0.7), evidence(2, 1, 0.7), { ...evidence(3, 0, 0.1), calls: 1000 }];
    const { ranked } = fuse([tied[0]!, { ...tied[1]!, calls: 10 }, tied[2]!]);
    expect(ranked.map((r) => r.toolId)).toEqual([2, 1, 3]);
    expect(ranked[0]!.score - ranked[1]!.score).toBeLessThanOrEqual(FUSION_PARAMS.popularityWeight);
  });

  it('ranks an exact name match first with score 1 whatever the legs say', () => {
    const { ranked, lowConfidence } = fuse([evidence(1, 10, 0.8), evidence(2, 0.1, 0.1, true)]);
    expect(ranked[0]).toMatchObject({ toolId: 2, score: 1, exact: true });
    expect(lowConfidence).toBe(false);
  });

  it('returns nothing when the best cosine is under the empty floor', () => {
    expect(fuse([evidence(1, 3, 0.2), evidence(2, 0, 0.1)])).toEqual({ ranked: [], lowConfidence: true });
  });

  it('flags low confidence when no query word matches and similarity is middling', () => {
    const result = fuse([evidence(1, null, 0.5), evidence(2, null, 0.45)]);
    expect(result.ranked).toHaveLength(2);
    expect(result.lowConfidence).toBe(true);
  });

  it('trusts a lexical match with a decent cosine', () => {
    expect(fuse([evidence(1, 2, 0.45)]).lowConfidence).toBe(false);
  });

  it('ranks by lexical score alone without vectors, and returns nothing without a match', () => {
    const { ranked, lowConfidence } = fuse([evidence(1, 1, null), evidence(2, 4, null)]);
    expect(ranked.map((r) => r.toolId)).toEqual([2, 1]);
    expect(ranked[0]!.score).toBeCloseTo(scale);
    expect(lowConfidence).toBe(false);
    expect(fuse([evidence(1, 0, null)]).ranked).toEqual([]);
  });

  it('ranks by one leg when asked', () => {
    const items = [evidence(1, 10, 0.5), evidence(2, 1, 0.7)];
    expect(fuse(items, FUSION_PARAMS, 'lexical').ranked.map((r) => r.toolId)).toEqual([1, 2]);
    expect(fuse(items, FUSION_PARAMS, 'vector').ranked.map((r) => r.toolId)).toEqual([2, 1]);
  });

  it('breaks ties by tool id so rankings are deterministic', () => {
    expect(fuse([evidence(7, 1, 0.5), evidence(3, 1, 0.5)]).ranked.map((r) => r.toolId)).toEqual([3, 7]);
  });
});
