import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';

import { bucketMedian, stageSplit } from '../../scripts/bench/stages.js';

/** A registry with the service's stage histogram (same name, labels and bucket bounds). */
function stageHistogram() {
  const registry = new Registry();
  const histogram = new Histogram({
    name: 'tool_registry_discovery_stage_seconds',
    help: 'stages',
    labelNames: ['stage', 'search_mode'],
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30],
    registers: [registry],
  });
  return { registry, histogram };
}

describe('bench stage split', () => {
  it('reports mean and bucket p50 of only the requests between two scrapes, for any stage label', async () => {
    const { registry, histogram } = stageHistogram();
    // Before the run: slow requests that must not count.
    for (let i = 0; i < 10; i += 1) histogram.observe({ stage: 'embedding', search_mode: 'hybrid' }, 1);
    const before = await registry.metrics();
    for (const ms of [3, 4, 4, 6]) histogram.observe({ stage: 'embedding', search_mode: 'hybrid' }, ms / 1000);
    histogram.observe({ stage: 'lexical', search_mode: 'hybrid' }, 0.008);
    histogram.observe({ stage: 'lexical', search_mode: 'lexical' }, 0.012);
    for (let i = 0; i < 3; i += 1) histogram.observe({ stage: 'total', search_mode: 'hybrid' }, 0.03);
    histogram.observe({ stage: 'total', search_mode: 'lexical' }, 0.03);
    const split = stageSplit(before, await registry.metrics());

    expect(split.mean).toEqual({ embedding: 4.25, lexical: 10, total: 30 });
    // 4 embeddings: 3 in (2, 5] ms, 1 in (5, 10]; the 2nd sits 2/3 into (2, 5].
    expect(split.p50.embedding).toBe(4);
    // Both modes' buckets are summed: one in (5, 10], one in (10, 20]; rank 1 ends the first.
    expect(split.p50.lexical).toBe(10);
    expect(split.modes).toEqual({ hybrid: 3, lexical: 1 });
  });

  it('leaves out stages with no request in the run', async () => {
    const { registry, histogram } = stageHistogram();
    histogram.observe({ stage: 'fetch', search_mode: 'hybrid' }, 0.001);
    const scrape = await registry.metrics();
    expect(stageSplit(scrape, scrape)).toEqual({ mean: {}, p50: {}, modes: {} });
  });

  it('puts a median beyond the last finite bound at that bound', () => {
    const buckets = new Map([[0.01, 0], [30, 1], [Number.POSITIVE_INFINITY, 4]]);
    expect(bucketMedian(buckets, 4)).toBe(30);
  });
});
