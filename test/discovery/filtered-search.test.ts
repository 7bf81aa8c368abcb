import { describe, expect, it } from 'vitest';

import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { type DiscoverResponse, useDiscoveryApp } from './helpers.js';

forEachDatabase((db) => {
  // The index search (HNSW iterative scan) must give the same guarantee as the exact one.
  describe.each([
    ['exact vector search', {}],
    ['index vector search', { VECTOR_INDEX_MIN_TOOLS: '0' }],
  ])('discovery under a selective scope filter, %s', (_label, env) => {
    const ctx = useDiscoveryApp(db, () => new HashingEmbedder(), env);

    it('never loses an authorized tool behind many closer unauthorized ones', async () => {
      const tenant = uniqueTenant('filter');
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      // 150 near-perfect matches the caller may not use, 3 weaker ones it may.
      for (let i = 0; i < 150; i += 1) {
        const doc = toolDocument({ name: `admin_refund_${i}`, description: 'Refund invoice payment now.', summary: undefined, required_scopes: ['billing:admin'] });
        expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
        // With the index from the first tool on, its build (PGlite: 503 meanwhile) is done before the rest.
        if (i === 0) await ctx.flush();
      }
      for (let i = 0; i < 3; i += 1) {
        const doc = toolDocument({ name: `user_refund_${i}`, description: `Refund invoice request number ${i} for a customer.`, summary: undefined, required_scopes: ['billing:read'] });
        expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
      }
      await ctx.flush();
      const caller = await token({ tenant, scopes: ['billing:read'] });
      for (const mode of ['hybrid', 'vector', 'lexical']) {
        const response = await call(ctx.app, 'POST', '/v1/discover', { token: caller, body: { query: 'refund invoice payment now', top_k: 10, mode } });
        const names = response.json<DiscoverResponse>().tools.map((t) => t.name).sort();
        expect(names, mode).toEqual(['user_refund_0', 'user_refund_1', 'user_refund_2']);
      }
    }, 60_000);
  });
});
