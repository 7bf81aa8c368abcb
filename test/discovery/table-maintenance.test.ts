import { sql } from 'drizzle-orm';
import { describe, expect, it, vi } from 'vitest';

import { fromPglite, rowsOf } from '../../src/db/client.js';
import { TableMaintenance } from '../../src/discovery/table-maintenance.js';
import { clonePglite } from '../helpers/databases.js';

const quiet = { warn: () => undefined, debug: () => undefined };

// Real PGlite (the only driver the service runs this on).
describe('TableMaintenance (embedded PGlite has no autovacuum)', () => {
  it('analyzes tables that were never analyzed, then only once enough rows changed', async () => {
    const client = await clonePglite();
    try {
      const { db } = fromPglite(client);
      const maintenance = new TableMaintenance(db, quiet, { analyzeThreshold: 50, analyzeScale: 0.1, vacuumThreshold: 50, vacuumScale: 0.2 });
      const first = await maintenance.runOnce();
      expect(first).toContain('analyze tools');
      expect(first).toContain('analyze tool_embeddings');
      const [row] = await rowsOf<{ reltuples: number }>(db.execute(sql`select reltuples::float8 as reltuples from pg_class where relname = 'tools'`));
      expect(Number(row?.reltuples)).toBeGreaterThanOrEqual(0);
      expect(await maintenance.runOnce()).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('vacuums the logs once retention deleted enough of their rows, and analyzes them only as they double', async () => {
    const client = await clonePglite();
    try {
      const { db } = fromPglite(client);
      const maintenance = new TableMaintenance(db, quiet, { analyzeThreshold: 50, analyzeScale: 0.1, vacuumThreshold: 50, vacuumScale: 0.2 });
      const insert = (from: number, to: number) =>
        db.execute(sql`
          insert into discovery_log (id, tenant_id, query, top_k, format, shortlist, search_mode, low_confidence, withheld, latency_ms)
          select gen_random_uuid(), 't', 'query ' || i, 3, 'openai', '[]', 'lexical', false, 0, 1 from generate_series(${from}::int, ${to}::int) i`);
      // PostgreSQL publishes a backend's table counters about a second after its statements.
      const counted = (n: number) =>
        vi.waitFor(async () => expect(await rowsOf<{ n: number }>(db.execute(sql`select n_mod_since_analyze::int as n from pg_stat_user_tables where relname = 'discovery_log'`))).toEqual([{ n }]), { timeout: 10_000, interval: 250 });
      await insert(1, 1000);
      await counted(1000);
      expect(await maintenance.runOnce()).toContain('analyze discovery_log');
      // 600 more rows: the tables' rule would analyze again, the logs' waits for the log to double.
      await insert(1001, 1600);
      await counted(600);
      expect(await maintenance.runOnce()).toEqual([]);
      await db.execute(sql`delete from discovery_log where query <> 'query 1'`);
      await vi.waitFor(async () => expect(await maintenance.runOnce()).toEqual(['vacuum analyze discovery_log']), { timeout: 10_000, interval: 250 });
      expect(await maintenance.runOnce()).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
