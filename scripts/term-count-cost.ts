/**
 * What deciding a request's searched words costs with a cold memo, counted from the postings
 * against read from stored term counts (migration 0016), on a kept bench database
 * (`npm run bench -- ... --keep-database` logs its URL). Applies pending migrations, rebuilds the
 * bench tenant's counts (timed), then for each of `requests` new bench requests times
 * `searchedTerms` both ways (fresh catalog statistics each time, best of 3, alternating which goes
 * first) and checks both give the same searched words. Leaves the counts current.
 * Usage: npx tsx scripts/term-count-cost.ts <postgres-url> [requests] [tenant]
 */
import { sql } from 'drizzle-orm';

import { openPostgres, rowsOf } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { catalogStats } from '../src/discovery/repository.js';
import { searchedTerms } from '../src/tools/lexical/searched-terms.js';
import { TermCountRefresh } from '../src/tools/lexical/term-counts.js';
import { realCallerScopes, realRequestText } from './bench/real-catalog.js';

/* eslint-disable no-console -- a script's output is its interface */

const [url, requests = '40', tenant = 'bench-t00'] = process.argv.slice(2);
if (!url) throw new Error('usage: npx tsx scripts/term-count-cost.ts <postgres-url> [requests] [tenant]');
const database = await openPostgres(url, 2);
await migrate(database);
const { db } = database;
const scopes = realCallerScopes();
const visibility = { tenantId: tenant, scopes, includeRetired: false };

await db.execute(sql`delete from term_count_revisions where tenant_id = ${tenant}`);
const refresh = new TermCountRefresh(db, { debug: () => undefined, warn: () => undefined });
await refresh.runOnce(); // first sight of the revision
const started = performance.now();
if (!(await refresh.runOnce()).includes(tenant)) throw new Error(`${tenant} was not rebuilt`);
const [stored] = await rowsOf<{ n: number }>(db.execute(sql`select count(*)::int as n from term_counts where tenant_id = ${tenant}`));
console.log(`rebuild: ${Math.round(performance.now() - started)} ms, ${stored?.n} rows`);

const [row] = await rowsOf<{ revision: number }>(db.execute(sql`select revision::float8 as revision from term_count_revisions where tenant_id = ${tenant}`));
const useStored = (yes: boolean) => db.execute(sql`update term_count_revisions set revision = ${yes ? row!.revision : -1} where tenant_id = ${tenant}`);
const times = { counted: [] as number[], stored: [] as number[] };
let differ = 0;
for (let i = 0; i < Number(requests); i += 1) {
  const text = realRequestText(42, 1_000_000 + i);
  const searched: string[] = [];
  for (const way of i % 2 === 0 ? (['counted', 'stored'] as const) : (['stored', 'counted'] as const)) {
    await useStored(way === 'stored');
    let best = Infinity;
    let words = '';
    for (let k = 0; k < 3; k += 1) {
      const stats = await catalogStats(db, tenant, scopes);
      const t = performance.now();
      const terms = await searchedTerms(db, { visibility, text, stats });
      best = Math.min(best, performance.now() - t);
      words = JSON.stringify([...terms].sort(([a], [b]) => a.localeCompare(b)));
    }
    times[way].push(best);
    searched.push(words);
  }
  if (searched[0] !== searched[1]) differ += 1;
}
await useStored(true);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
console.log(`searched words, median of ${requests} requests: counted ${median(times.counted).toFixed(2)} ms, stored ${median(times.stored).toFixed(2)} ms; requests whose words or counts differ: ${differ}`);
await database.close();
