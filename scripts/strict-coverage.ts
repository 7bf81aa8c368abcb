/**
 * How many tools of a dataset can be called in OpenAI's strict mode: as published (`strict: true`
 * unchanged) and with the strict rendering (`"strict": true` on POST /v1/discover). Each rendering
 * is checked against the published rules (src/tools/openai-strict.ts) and against the `openai`
 * package's own strict normalizer (`toStrictJsonSchema`), which must leave it unchanged.
 * Usage: npx tsx scripts/strict-coverage.ts [dataset folder ...] (default: ../shared/bench/dev-data and dev-mcp)
 */
import { isDeepStrictEqual } from 'node:util';

import { toStrictJsonSchema } from 'openai/lib/transform';

import { loadDataset } from '../src/eval/dataset.js';
import { strictCoverage } from '../src/eval/strict-coverage.js';

/* eslint-disable no-console -- a script's output is its interface */

const dirs = process.argv.slice(2);
for (const dir of dirs.length > 0 ? dirs : ['../shared/bench/dev-data', '../shared/bench/dev-mcp']) {
  const coverage = strictCoverage((await loadDataset(dir)).tools);
  let sdkUnchanged = 0;
  for (const { strict } of coverage.renderings) {
    try {
      if (isDeepStrictEqual(toStrictJsonSchema(strict as never), strict)) sdkUnchanged += 1;
    } catch {
      // counted as changed
    }
  }
  console.log(`${dir}: ${coverage.tools} tools; strict as published ${coverage.asPublished}; strict rendering ${coverage.rendered} (refused by the rule checker: ${coverage.refused}; left unchanged by the openai package's normalizer: ${sdkUnchanged})`);
  for (const [reason, tools] of coverage.fallbacks) console.log(`  no strict form, ${tools}: ${reason}`);
}
