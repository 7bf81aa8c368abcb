import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { LocalEmbedder } from '../../src/embedding/local.js';
import { runEval } from '../../src/eval/run.js';

// A copy of ../shared/bench/dev-data (MetaTool, MIT; provenance in its SOURCE.md) kept with the
// tests, so the floor runs wherever the repository is cloned, with or without ../shared beside it.
const DEV_DATA = new URL('../fixtures/metatool-dev/', import.meta.url).pathname;
const SHARED = new URL('../../../shared/bench/dev-data/', import.meta.url).pathname;

/**
 * Regression floor on the MetaTool dev set: every third query, through the real HTTP API on PGlite
 * with the local encoder. Full-set figures: `npm run eval` (which reads ../shared/bench/dev-data).
 */
describe('retrieval quality on the dev set', () => {
  it('tests on the same data as ../shared/bench/dev-data, where that is present', () => {
    for (const file of ['tools.jsonl', 'queries.jsonl']) {
      if (existsSync(join(SHARED, file))) expect(readFileSync(join(DEV_DATA, file), 'utf8')).toBe(readFileSync(join(SHARED, file), 'utf8'));
      else expect(readFileSync(join(DEV_DATA, file), 'utf8').length).toBeGreaterThan(0);
    }
  });

  it('keeps hybrid recall@5 and MRR above the floor', async () => {
    const report = await runEval({
      dataDir: DEV_DATA,
      outDir: mkdtempSync(join(tmpdir(), 'eval-')),
      embedder: await LocalEmbedder.load(),
      modes: ['hybrid'],
      stride: 3,
      rankingOnly: true,
    });
    const hybrid = report.results.find((r) => r.method.startsWith('hybrid'))!;
    const floor = report.results.find((r) => r.method.startsWith('plain BM25'))!;
    expect(report.registered).toBe(report.tools);
    expect(hybrid.recall5).toBeGreaterThanOrEqual(0.84);
    expect(hybrid.mrr).toBeGreaterThanOrEqual(0.71);
    expect(hybrid.recall5).toBeGreaterThan(floor.recall5 + 0.2);
    expect(hybrid.mrr).toBeGreaterThan(floor.mrr + 0.2);
    console.info(`dev set (every 3rd query): recall@5 ${hybrid.recall5.toFixed(3)}, MRR ${hybrid.mrr.toFixed(3)}`);
  }, 180_000);
});
