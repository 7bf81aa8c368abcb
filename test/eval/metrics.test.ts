import { describe, expect, it } from 'vitest';

import { hitAt, ndcgAt, reciprocalRank, summarize } from '../../src/eval/metrics.js';
import { floorWords, PlainBm25 } from '../../src/eval/plain-bm25.js';

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

describe('PlainBm25 (the floor)', () => {
  const tools = [
    { name: 'get_weather', description: 'Get the weather forecast for a city' },
    { name: 'stockPrices', description: 'Stock prices' },
    { name: 'news', description: 'Latest news for a city, and the weather too' },
  ];

  it('splits camelCase and snake_case, lower-cases, and does not stem', () => {
    expect(floorWords('getWeatherForecast for_my city, Forecasts')).toEqual(['get', 'weather', 'forecast', 'for', 'my', 'city', 'forecasts']);
  });

  it('ranks by BM25 over name and description, leaving out tools that match no word', () => {
    const floor = new PlainBm25(tools);
    expect(floor.rank('weather forecast for my city', 5)).toEqual(['get_weather', 'news']);
    expect(floor.rank('stock prices', 5)).toEqual(['stockPrices']);
    expect(floor.rank('forecasts', 5)).toEqual([]);
  });

  it('scores a rare word above a common one (IDF), with the textbook saturation', () => {
    const floor = new PlainBm25(tools);
    // "weather" is in two tools, "latest" in one: the tool with the rare word wins.
    expect(floor.rank('latest weather', 1)).toEqual(['news']);
  });
});
