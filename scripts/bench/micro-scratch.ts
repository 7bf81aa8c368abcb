import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
const dir = process.argv[2]!;
const t0 = performance.now();
const db = await PGlite.create({ dataDir: dir, extensions: { vector } });
console.log('open ms', Math.round(performance.now() - t0));
async function time(label: string, fn: () => Promise<unknown>, n = 20) {
  const ts: number[] = [];
  for (let i = 0; i < n; i++) { const s = performance.now(); await fn(); ts.push(performance.now() - s); }
  ts.sort((a, b) => a - b);
  console.log(label.padEnd(40), 'p50', ts[n >> 1]!.toFixed(2), 'max', ts[n - 1]!.toFixed(2));
}
await time('select 1', () => db.query('select 1'));
await time('count tools', () => db.query('select count(*) from tools'));
await db.exec('create temp table if not exists x (a int)');
await time('insert temp', () => db.query('insert into x values (1)'));
await time('insert discovery_log', () => db.query(`insert into discovery_log (id, tenant_id, query, top_k, format, shortlist, search_mode, low_confidence, withheld, latency_ms) values (gen_random_uuid(), 'x', 'q', 3, 'openai', '[]', 'hybrid', false, 0, 1)`));
await time('set synchronous_commit off; insert', async () => { await db.exec('set synchronous_commit = off'); await db.query(`insert into discovery_log (id, tenant_id, query, top_k, format, shortlist, search_mode, low_confidence, withheld, latency_ms) values (gen_random_uuid(), 'x', 'q', 3, 'openai', '[]', 'hybrid', false, 0, 1)`); });
console.log((await db.query("select name, setting from pg_settings where name in ('fsync','synchronous_commit','wal_sync_method','full_page_writes','shared_buffers','work_mem')")).rows);
console.log((await db.query("select relname, n_live_tup, last_analyze, last_autoanalyze from pg_stat_user_tables")).rows);
await db.close();
