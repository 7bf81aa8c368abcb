import { describe, expect, it } from 'vitest';

import { type DiscoverResponse, useDiscoveryApp } from '../discovery/helpers.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

const plain = (name: string, description: string) =>
  toolDocument({ name, description, summary: undefined, aliases: [], examples: [], tags: [], category: undefined, not_for: undefined, required_scopes: [], policy: undefined });

forEachDatabase((db) => {
  describe('learning from allowed calls', () => {
    // Allowed calls do not bump the catalog revision: a cached shortlist takes them in after
    // DISCOVERY_CACHE_TTL_MS (test/discovery/shortlist-cache.test.ts); here at once.
    const ctx = useDiscoveryApp(db, () => new HashingEmbedder(), { DISCOVERY_CACHE_TTL_MS: '1' });

    it('lets usage reorder near-ties but never lift an irrelevant tool over a relevant one', async () => {
      const tenant = uniqueTenant('pop');
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      const agent = await token({ tenant, scopes: [] });
      for (const doc of [plain('export_csv_one', 'Export the sales report as CSV.'), plain('export_csv_two', 'Export the sales report as CSV.'), plain('send_fax', 'Send a fax to a phone number.')]) {
        expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
      }
      await ctx.flush();
      const rank = async () => (await call(ctx.app, 'POST', '/v1/discover', { token: agent, body: { query: 'export the sales report as csv', top_k: 3 } })).json<DiscoverResponse>().tools.map((t) => t.name);
      // A tie, broken by registration order.
      expect((await rank()).slice(0, 2)).toEqual(['export_csv_one', 'export_csv_two']);
      const callTool = async (tool: string) =>
        expect((await call(ctx.app, 'POST', '/v1/authorize', { token: agent, body: { tool, arguments: { invoice_id: 'x' } } })).json().decision).toBe('allow');
      for (let i = 0; i < 3; i += 1) await callTool('export_csv_two');
      expect((await rank()).slice(0, 2)).toEqual(['export_csv_two', 'export_csv_one']);
      for (let i = 0; i < 40; i += 1) await callTool('send_fax');
      expect((await rank()).slice(0, 2).sort()).toEqual(['export_csv_one', 'export_csv_two']);
    });
  });

  describe('learning switched off', () => {
    const ctx = useDiscoveryApp(db, () => new HashingEmbedder(), { LEARNING_ENABLED: 'false' });

    it('records no learned alias for a miss', async () => {
      const tenant = uniqueTenant('nolearn');
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      for (const doc of [plain('send_fax', 'Send a fax to a phone number.'), plain('export_csv', 'Export the sales report as CSV.')]) {
        await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: doc });
      }
      await ctx.flush();
      const offered = (await call(ctx.app, 'POST', '/v1/discover', { token: publisher, body: { query: 'export the sales report', top_k: 1 } })).json<DiscoverResponse>();
      expect(offered.tools.map((t) => t.name)).toEqual(['export_csv']);
      for (let i = 0; i < 3; i += 1) {
        await call(ctx.app, 'POST', '/v1/authorize', { token: publisher, body: { tool: 'send_fax', arguments: { invoice_id: 'x' }, discovery_id: offered.discovery_id } });
      }
      const learned = await call(ctx.app, 'GET', '/v1/tools/send_fax/learned-aliases', { token: publisher });
      expect(learned.json().learned_aliases).toEqual([]);
    });
  });
});
