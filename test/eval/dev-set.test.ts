import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { LocalEmbedder } from '../../src/embedding/local.js';
import { runEval } from '../../src/eval/run.js';

const DEV_DATA = new URL('../../../shared/bench/dev-data/', import.meta.url).pathname;
const available = existsSync(join(DEV_DATA, 'queries.jsonl'));
if (!available) console.warn(`dev-set regression floor SKIPPED: no dataset at ${DEV_DATA}`);

/**
 * Regression floor on the MetaTool dev set (../shared/bench/dev-data): every third query, through
 * the real HTTP API on PGlite with the local encoder. Full-set figures: `npm run eval`.
 */
describe.skipIf(!available)(`retrieval quality on the dev set${available ? '' : ' (SKIPPED: ../shared/bench/dev-data missing)'}`, () => {
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
    const baseline = report.results.find((r) => r.method.startsWith('keyword'))!;
    expect(report.registered).toBe(report.tools);
    expect(hybrid.recall5).toBeGreaterThanOrEqual(0.84);
    expect(hybrid.mrr).toBeGreaterThanOrEqual(0.71);
    expect(hybrid.recall5).toBeGreaterThan(baseline.recall5 + 0.4);
    console.info(`dev set (every 3rd query): recall@5 ${hybrid.recall5.toFixed(3)}, MRR ${hybrid.mrr.toFixed(3)}`);
  }, 180_000);
});
