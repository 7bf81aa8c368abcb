import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';

import { POOR_SCAN_ROWS } from '../../src/discovery/log-repository.js';
import { UNANSWERED_SCAN_ROWS } from '../../src/learning/repository.js';
import { call, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

interface DiscoveriesPage {
  discoveries: { query: string; at: string; low_confidence: boolean }[];
  next_before: string | null;
}

forEachDatabase((db) => {
  describe('GET /v1/discoveries over a long log', () => {
    const ctx = useApp(db, { DISCOVERY_LOG_RETENTION_DAYS: '0' });
    const tenant = uniqueTenant('long-log');
    const entries = 2 * POOR_SCAN_ROWS + 5_000;
    let publisher: string;

    beforeAll(async () => {
      publisher = await token({ tenant, scopes: [PUBLISH] });
      // One discovery a second, newest last; only the oldest and one in 10,000 matched poorly.
      await db.database.db.execute(sql`
        insert into discovery_log (id, tenant_id, at, query, top_k, format, shortlist, search_mode, low_confidence, withheld, latency_ms)
        select gen_random_uuid(), ${tenant}, now() - make_interval(secs => ${entries}::int - i), 'query ' || i, 3, 'openai',
               '[{"name":"issue_refund","version":"1.0.0","score":0.9}]', 'hybrid', i = 1 or i % 10000 = 0, 0, 1
        from generate_series(1, ${entries}::int) i`);
    });

    const page = async (query: string): Promise<DiscoveriesPage> => {
      const response = await call(ctx.app, 'GET', `/v1/discoveries?${query}`, { token: publisher });
      expect(response.statusCode).toBe(200);
      return response.json<DiscoveriesPage>();
    };

    it('searches poor discoveries through pages of at most POOR_SCAN_ROWS, and the pages hold every one', async () => {
      const pages: DiscoveriesPage[] = [];
      let before: string | null = null;
      do {
        const next: DiscoveriesPage = await page(`poor=true&limit=50${before === null ? '' : `&before=${encodeURIComponent(before)}`}`);
        pages.push(next);
        before = next.next_before;
      } while (before !== null);
      expect(pages.length).toBe(3);
      const poor = pages.flatMap((p) => p.discoveries.map((d) => d.query));
      expect(poor).toEqual(['query 20000', 'query 10000', 'query 1']);
    });

    it('judges at most the newest UNANSWERED_SCAN_ROWS discoveries in the misses report', async () => {
      const unanswered = async () =>
        (await call(ctx.app, 'GET', '/v1/reports/misses?days=1&limit=5', { token: publisher })).json<{ unanswered_discoveries: unknown[] }>().unanswered_discoveries;
      expect(await unanswered()).toHaveLength(5);
      // Calls cite the newest discoveries: past the five-minute grace (300 at one a second) and a
      // margin for the seconds the test takes, more than the report examines are answered.
      await db.database.db.execute(sql`
        insert into audit_log (tenant_id, action, tool_name, decision, discovery_id)
        select ${tenant}, 'authorize', 'issue_refund', 'allow', id from discovery_log
        where tenant_id = ${tenant} order by at desc limit ${UNANSWERED_SCAN_ROWS + 300 + 60}`);
      // Older ones were never answered, but lie beyond what one report reads.
      expect(await unanswered()).toEqual([]);
    });

    it('pages a plain listing by `limit`, naming the next page', async () => {
      const first = await page('limit=2');
      expect(first.discoveries.map((d) => d.query)).toEqual([`query ${entries}`, `query ${entries - 1}`]);
      expect(first.next_before).toBe(first.discoveries[1]!.at);
      const second = await page(`limit=2&before=${encodeURIComponent(first.next_before!)}`);
      expect(second.discoveries.map((d) => d.query)).toEqual([`query ${entries - 2}`, `query ${entries - 3}`]);
    });
  });
});
