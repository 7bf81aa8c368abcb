import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';

import { AUDIT_SCAN_ROWS } from '../../src/audit/repository.js';
import { call, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

interface AuditPage {
  entries: { id: number; action: string; tool: { name: string } }[];
  next_before: number | null;
}

forEachDatabase((db) => {
  describe('GET /v1/audit over a long log', () => {
    const ctx = useApp(db);
    const tenant = uniqueTenant('long-audit');
    const records = 2 * AUDIT_SCAN_ROWS + 5_000;
    let publisher: string;

    beforeAll(async () => {
      publisher = await token({ tenant, scopes: [PUBLISH] });
      // The oldest record is the tool's publish; every later one an authorize decision, one in 1,000 about another tool.
      await db.database.db.execute(sql`
        insert into audit_log (tenant_id, actor, action, tool_name, tool_version, decision)
        select ${tenant}, 'agent',
               case when i = 1 then 'publish' else 'authorize' end,
               case when i % 1000 = 0 then 'rare_tool' else 'busy_tool' end,
               '1.0.0', case when i = 1 then null else 'allow' end
        from generate_series(1, ${records}::int) i order by i`);
    });

    const page = async (query: string): Promise<AuditPage> => {
      const response = await call(ctx.app, 'GET', `/v1/audit?${query}`, { token: publisher });
      expect(response.statusCode).toBe(200);
      return response.json<AuditPage>();
    };

    /** Every page of a listing, following next_before as the SDK does. */
    const pages = async (query: string): Promise<AuditPage[]> => {
      const all: AuditPage[] = [];
      let before: number | null = null;
      do {
        const next: AuditPage = await page(`${query}${before === null ? '' : `&before=${before}`}`);
        all.push(next);
        before = next.next_before;
      } while (before !== null);
      return all;
    };

    it('searches a filter through pages of at most AUDIT_SCAN_ROWS records, and the pages hold every match', async () => {
      const publishes = await pages('action=publish&limit=5');
      // Three windows of the log: two full ones with nothing, the last with the publish.
      expect(publishes.map((p) => p.entries.length)).toEqual([0, 0, 1]);
      expect(publishes.at(-1)!.entries[0]).toMatchObject({ action: 'publish', tool: { name: 'busy_tool' } });
      const rare = (await pages('tool=rare_tool&limit=4')).flatMap((p) => p.entries);
      expect(rare).toHaveLength(Math.floor(records / 1000));
      expect(rare.every((e) => e.tool.name === 'rare_tool')).toBe(true);
      expect(rare.map((e) => e.id)).toEqual([...rare.map((e) => e.id)].sort((a, b) => b - a));
    });

    it('ends a filtered page at `limit` matches, and an unfiltered listing pages by `limit` alone', async () => {
      const first = await page('action=authorize&limit=3');
      expect(first.entries).toHaveLength(3);
      expect(first.next_before).toBe(first.entries[2]!.id);
      const plain = await page('limit=2');
      expect(plain.entries).toHaveLength(2);
      expect(plain.next_before).toBe(plain.entries[1]!.id);
    });
  });
});
