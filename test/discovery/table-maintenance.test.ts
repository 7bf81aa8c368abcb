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

  it('vacuums the logs once retention deleted enough of their rows, and never analyzes them', async () => {
    const client = await clonePglite();
    try {
      const { db } = fromPglite(client);
      const maintenance = new TableMaintenance(db, quiet, { analyzeThreshold: 50, analyzeScale: 0.1, vacuumThreshold: 50, vacuumScale: 0.2 });
      await maintenance.runOnce();
      await db.execute(sql`
        insert into discovery_log (id, tenant_id, query, top_k, format, shortlist, search_mode, low_confidence, withheld, latency_ms)
        select gen_random_uuid(), 't', 'query ' || i, 3, 'openai', '[]', 'lexical', false, 0, 1 from generate_series(1, 300) i`);
      expect(await maintenance.runOnce()).toEqual([]);
      await db.execute(sql`delete from discovery_log where query <> 'query 1'`);
      // PostgreSQL publishes a backend's table counters about a second after its statements.
      await vi.waitFor(async () => expect(await maintenance.runOnce()).toEqual(['vacuum discovery_log']), { timeout: 10_000, interval: 250 });
      expect(await maintenance.runOnce()).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
