import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';

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
});
