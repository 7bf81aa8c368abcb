import { describe, expect, it } from 'vitest';

import { keywordOverlapRank } from '../../src/eval/keyword-baseline.js';
import { hitAt, ndcgAt, reciprocalRank, summarize } from '../../src/eval/metrics.js';

describe('retrieval metrics', () => {
  const outcome = { ranked: ['a', 'b', 'c', 'd', 'e', 'f'], relevant: ['c', 'x'] };

  it('counts a hit when any relevant tool is within k', () => {
    expect([hitAt(outcome, 1), hitAt(outcome, 2), hitAt(outcome, 3)]).toEqual([0, 0, 1]);
  });

  it('takes the reciprocal rank of the first relevant tool, 0 when absent', () => {
    expect(reciprocalRank(outcome)).toBeCloseTo(1 / 3);
    expect(reciprocalRank({ ranked: ['a'], relevant: ['z'] })).toBe(0);
  });

  it('normalizes DCG by the ideal ranking of all relevant tools', () => {
    expect(ndcgAt({ ranked: ['x', 'c'], relevant: ['c', 'x'] }, 5)).toBeCloseTo(1);
    expect(ndcgAt(outcome, 5)).toBeCloseTo(0.5 / (1 + 1 / Math.log2(3)));
  });

  it('averages over queries', () => {
    const summary = summarize([outcome, { ranked: ['x'], relevant: ['x'] }]);
    expect(summary).toMatchObject({ queries: 2, recall1: 0.5, recall5: 1 });
    expect(summary.mrr).toBeCloseTo((1 / 3 + 1) / 2);
  });
});

describe('keywordOverlapRank', () => {
  it('orders tools by how many query words they share', () => {
    const tools = [
      { name: 'weather', description: 'Get the weather forecast for a city' },
      { name: 'stocks', description: 'Stock prices' },
      { name: 'news', description: 'Latest news for a city' },
    ];
    expect(keywordOverlapRank('weather forecast for my city', tools, 5)).toEqual(['weather', 'news']);
  });
});
