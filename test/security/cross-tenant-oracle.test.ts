import { describe, expect, it } from 'vitest';

import { useDiscoveryApp } from '../discovery/helpers.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { token, uniqueTenant } from '../helpers/tokens.js';

const cacheCount = (metrics: string, cache: 'query_embedding' | 'shortlist', result: 'hit' | 'miss') =>
  Number(new RegExp(`tool_registry_${cache}_cache_total\\{result="${result}"\\} (\\d+)`).exec(metrics)?.[1] ?? Number.NaN);

/**
 * The query-embedding and shortlist caches are no oracle across tenants (issue 13, finding 5): one tenant cannot
 * learn, from /metrics or from latency, whether another asked an exact phrase. And /metrics can
 * be closed with METRICS_TOKEN.
 */
forEachDatabase((db) => {
  describe('query embedding and shortlist caches across tenants', () => {
    const ctx = useDiscoveryApp(db, () => new HashingEmbedder());

    it("a phrase another tenant asked is a miss for this tenant, a hit only for the one who asked", async () => {
      const victim = await token({ tenant: uniqueTenant('victim') });
      const spy = await token({ tenant: uniqueTenant('spy') });
      const phrase = 'merge the acquisition payroll ledgers before the announcement';
      const discover = (tk: string) => call(ctx.app, 'POST', '/v1/discover', { token: tk, body: { query: phrase } });
      const counters = async () => {
        const text = (await call(ctx.app, 'GET', '/metrics')).body;
        return {
          embedding: { hit: cacheCount(text, 'query_embedding', 'hit'), miss: cacheCount(text, 'query_embedding', 'miss') },
          shortlist: { hit: cacheCount(text, 'shortlist', 'hit'), miss: cacheCount(text, 'shortlist', 'miss') },
        };
      };
      expect((await discover(victim)).statusCode).toBe(200);
      const before = await counters();
      expect((await discover(spy)).statusCode).toBe(200);
      const after = await counters();
      expect(after.embedding).toEqual({ hit: before.embedding.hit, miss: before.embedding.miss + 1 });
      expect(after.shortlist).toEqual({ hit: before.shortlist.hit, miss: before.shortlist.miss + 1 });
      // The one who asked hits the shortlist (which then needs no query vector).
      await discover(victim);
      const again = await counters();
      expect(again.shortlist.hit).toBe(before.shortlist.hit + 1);
      expect(again.embedding).toEqual(after.embedding);
    });
  });

  describe('METRICS_TOKEN', () => {
    const secret = 'metrics-token-0123456789';
    const ctx = useDiscoveryApp(db, () => undefined, { METRICS_TOKEN: secret });

    it('closes /metrics to callers without the token', async () => {
      for (const headers of [{}, { authorization: 'Bearer wrong-token-0123456789' }, { authorization: `Basic ${secret}` }] as Record<string, string>[]) {
        const res = await call(ctx.app, 'GET', '/metrics', { headers });
        expect(res.statusCode).toBe(401);
        expect(res.json().error.code).toBe('unauthorized');
      }
      const ok = await call(ctx.app, 'GET', '/metrics', { headers: { authorization: `Bearer ${secret}` } });
      expect(ok.statusCode).toBe(200);
      expect(ok.body).toContain('tool_registry_http_request_duration_seconds');
    });
  });
});
