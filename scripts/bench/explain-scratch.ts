// scratch: time the discovery statements in-process, EXPLAIN ANALYZE them, before and after ANALYZE.
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { drizzle } from 'drizzle-orm/pglite';
import * as schema from '../../src/db/schema.js';
import type { Db } from '../../src/db/client.js';
import { CatalogStatsCache } from '../../src/discovery/catalog-cache.js';
import { DiscoveryService, type StageTimings } from '../../src/discovery/service.js';
import { QueryEmbeddings } from '../../src/embedding/query-cache.js';
import { callerScopes, requestText } from './catalog.js';
import { FakeEmbeddingServer } from './fake-embedder.js';

const dir = process.argv[2]!;
const mode = process.argv[3] ?? 'time';
const client = await PGlite.create({ dataDir: dir, extensions: { vector } });
const captured: { query: string; params: unknown[] }[] = [];
const db = drizzle({ client, schema, logger: { logQuery: (query, params) => void captured.push({ query, params }) } }) as unknown as Db;
const embedder = { model: 'openai:bench-hash-512', embed: async (t: string[]) => t.map(FakeEmbeddingServer.vector) };
const sums: Record<string, number[]> = {};
const service = new DiscoveryService(db, new QueryEmbeddings(embedder, 2000), new CatalogStatsCache(), (t: StageTimings) => {
  for (const [k, v] of Object.entries(t)) (sums[k] ??= []).push(v);
});
const principal = { tenant: 'bench-t00', scopes: callerScopes(), subject: 'x' } as never;
async function run(label: string) {
  for (const k of Object.keys(sums)) delete sums[k];
  for (let i = 0; i < 60; i++) await service.discover(principal, { query: requestText(43, i % 30), top_k: 3, format: 'openai' });
  const med = (a: number[]) => [...a].sort((x, y) => x - y)[a.length >> 1]!.toFixed(2);
  console.log(label, Object.entries(sums).map(([k, v]) => `${k}=${med(v)}`).join(' '));
}
if (process.argv[4] === 'analyze-first') { await client.exec('analyze'); console.log('analyzed'); }
await run('warm');
await run('median ms');
if (mode === 'explain') {
  captured.length = 0;
  await service.discover(principal, { query: requestText(43, 1), top_k: 3, format: 'openai' });
  for (const c of captured) {
    if (/^insert/i.test(c.query)) continue;
    const plan = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers) ${c.query}`, c.params as unknown[]);
    console.log('-----', c.query.slice(0, 80).replace(/\s+/g, ' '));
    console.log(plan.rows.map((r) => r['QUERY PLAN']).join('\n'));
  }
}
await client.close();
