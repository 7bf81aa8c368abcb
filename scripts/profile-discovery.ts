/**
 * In-process discovery profile: builds a synthetic catalog (the bench's generator) on an in-memory
 * PGlite, embeds it with the bench's hashing vectors, runs table maintenance, then times discovery per
 * stage in lexical and hybrid mode, without HTTP.
 * Usage: npm run profile:discovery -- [tools] [data-dir]; with a data dir the built catalog is kept
 * there and reused by the next run (migrations still apply), so comparing changes at 10,000 tools
 * does not rebuild it each time.
 */
import { sql } from 'drizzle-orm';

import { loadConfig } from '../src/config.js';
import { openPglite, rowsOf } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import type { StageTimings } from '../src/discovery/service.js';
import { TableMaintenance } from '../src/discovery/table-maintenance.js';
import type { Embedder } from '../src/embedding/provider.js';
import { createServices } from '../src/services.js';
import { ToolValidator } from '../src/tools/validation.js';
import { callerScopes, generateTools, requestText } from './bench/catalog.js';
import { FakeEmbeddingServer } from './bench/fake-embedder.js';

/* eslint-disable no-console -- a script's output is its interface */

const size = Number(process.argv[2] ?? 1000);
const dataDir = process.argv[3] ?? 'memory://';
const runs = 30;
const silent = { info: () => undefined, warn: () => undefined, debug: () => undefined };

const database = await openPglite(dataDir);
await migrate(database);
// The bench's deterministic 512-d bag-of-words vectors, in-process (no loopback server).
const embedder: Embedder = { model: 'bench-hash-512', embed: async (texts) => texts.map((text) => FakeEmbeddingServer.vector(text)) };
// Per-stage totals of the mode being measured (reset before each measurement).
let totals: Partial<Record<keyof StageTimings, number>> = {};
const { tools, indexer, discovery } = createServices(loadConfig({ VECTOR_INDEX_MIN_TOOLS: process.env.VECTOR_INDEX_MIN_TOOLS }), {
  database,
  embedder,
  log: silent,
  onDiscoveryTimings: (timings) => {
    for (const [stage, ms] of Object.entries(timings) as [keyof StageTimings, number][]) totals[stage] = (totals[stage] ?? 0) + ms;
  },
});
const validator = new ToolValidator({ descriptionLength: 10_000, summaryLength: 200, schemaDepth: 32 });
const publisher = { tenant: 'bench', subject: null, scopes: ['registry:publish'] };
const started = performance.now();
const [existing] = await rowsOf<{ n: number }>(database.db.execute(sql`select count(*)::int as n from tools`));
if ((existing?.n ?? 0) < size) {
  for (const tool of generateTools(42, 0, size)) {
    const result = validator.validate(tool);
    if (result.ok) await tools.register(publisher, result.document);
  }
}
await indexer!.flush();
console.log(`catalog ready in ${((performance.now() - started) / 1000).toFixed(1)} s`);
await new TableMaintenance(database.db, silent).runOnce();

const caller = { tenant: 'bench', subject: 'profile', scopes: callerScopes() };
for (const mode of ['lexical', 'hybrid'] as const) {
  // Warm caches (query vectors, catalog statistics), then measure.
  for (let i = 0; i < 20; i += 1) await discovery.discover(caller, { query: requestText(1, i), top_k: 3, format: 'openai', mode });
  totals = {};
  for (let i = 0; i < runs; i += 1) await discovery.discover(caller, { query: requestText(1, i % 20), top_k: 3, format: 'openai', mode });
  const perStage = Object.entries(totals).map(([stage, ms]) => `${stage} ${(ms / runs).toFixed(2)}`);
  console.log(`${size} tools, ${mode}: ${perStage.join(', ')} (ms per query)`);
}
await database.close();
