import { beforeAll, describe, expect, it } from 'vitest';

import { type DiscoverResponse, useDiscoveryApp } from '../discovery/helpers.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

/** Every sample of `name` in an exposition, keyed by its label set as written (`{a="1"}` or ''). */
function samples(text: string, name: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labels = line.slice(name.length, line.lastIndexOf(' '));
    found.set(labels, Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return found;
}

/**
 * Quality metrics on /metrics: empty and low-confidence shortlists per search mode, and the
 * catalog's size with bounded labels only (no tenant, no scope: their number is unbounded).
 * Each file has a database of its own, so the catalog counts are this file's tools alone.
 */
forEachDatabase((db) => {
  describe('quality metrics on GET /metrics', () => {
    const ctx = useDiscoveryApp(db, () => new HashingEmbedder());
    const tenant = uniqueTenant('quality');
    const stranger = uniqueTenant('quality-empty');
    let publisher: string;

    const metrics = async () => (await call(ctx.app, 'GET', '/metrics')).body;
    const discover = async (tokenValue: string, query: string) => {
      const response = await call(ctx.app, 'POST', '/v1/discover', { token: tokenValue, body: { query } });
      expect(response.statusCode).toBe(200);
      return response.json<DiscoverResponse>();
    };

    beforeAll(async () => {
      publisher = await token({ tenant, scopes: [PUBLISH, 'billing:admin'] });
      for (const doc of [
        toolDocument({ name: 'issue_refund' }),
        toolDocument({ name: 'cancel_order', description: 'Cancel an unpaid order before it ships.', required_scopes: ['billing:admin'], sensitivity: 'high' }),
      ]) {
        expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
      }
      expect((await call(ctx.app, 'DELETE', '/v1/tools/cancel_order', { token: publisher })).statusCode).toBe(200);
      await ctx.flush();
    });

    it('gauges the catalog: tools by status, tenants by a bounded size bucket, scope sets; never a tenant label', async () => {
      const text = await metrics();
      expect(samples(text, 'tool_registry_catalog_tools')).toEqual(new Map([['{status="active"}', 1], ['{status="retired"}', 1]]));
      const tenants = samples(text, 'tool_registry_catalog_tenants');
      expect(tenants.get('{size="1-10"}')).toBe(1);
      expect([...tenants.keys()].sort()).toEqual(['{size="0"}', '{size="1-10"}', '{size="10001+"}', '{size="1001-10000"}', '{size="101-1000"}', '{size="11-100"}']);
      expect(samples(text, 'tool_registry_catalog_scope_sets').get('')).toBe(2);
      expect(text).not.toContain(tenant);
    });

    it('counts an empty shortlist and a low-confidence one, by search mode', async () => {
      const counter = async (name: string) => samples(await metrics(), name).get('{search_mode="hybrid"}') ?? 0;
      const before = {
        all: await counter('tool_registry_discovery_shortlists_total'),
        empty: await counter('tool_registry_discovery_empty_shortlists_total'),
        low: await counter('tool_registry_discovery_low_confidence_shortlists_total'),
      };
      // A caller of a tenant without tools: nothing to find.
      const empty = await discover(await token({ tenant: stranger, scopes: [] }), 'refund a paid invoice');
      expect(empty.tools).toEqual([]);
      const found = await discover(await token({ tenant, scopes: [] }), 'refund a paid invoice in full or in part');
      expect(found.tools.map((t) => t.name)).toEqual(['issue_refund']);

      expect(await counter('tool_registry_discovery_shortlists_total')).toBe(before.all + 2);
      expect(await counter('tool_registry_discovery_empty_shortlists_total')).toBe(before.empty + 1);
      const flagged = [empty, found].filter((r) => r.low_confidence).length;
      expect(flagged).toBeGreaterThanOrEqual(1);
      expect(await counter('tool_registry_discovery_low_confidence_shortlists_total')).toBe(before.low + flagged);
      expect(await metrics()).not.toContain(stranger);
    });
  });
});
