import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';

import { rowsOf } from '../../src/db/client.js';
import { call, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import type { DiscoverResponse } from './helpers.js';

// The lexical leg reads only postings, which carry their tool's scopes and exist only for active
// tools: every change to a tool must leave them in step, or discovery would show stale tools.
forEachDatabase((db) => {
  describe('BM25 postings follow every change to a tool', () => {
    const ctx = useApp(db);
    const tenant = uniqueTenant('postings');
    const name = 'frobnicate_widget';
    const postings = async () =>
      rowsOf<{ required_scopes: string[]; n: number }>(
        db.database.db.execute(sql`select s.scopes as required_scopes, count(*)::int as n
                                   from tool_terms t join tools on tools.id = t.tool_id join scope_sets s on s.id = t.scope_set and s.tenant_id = t.tenant_id
                                   where tools.tenant_id = ${tenant} and tools.name = ${name} group by s.scopes`),
      );
    const found = async (query: string, scopes: string[] = []) => {
      const response = await call(ctx.app, 'POST', '/v1/discover', { token: await token({ tenant, scopes }), body: { query, mode: 'lexical' } });
      expect(response.statusCode).toBe(200);
      return response.json<DiscoverResponse>().tools.some((t) => t.name === name);
    };

    it('on publish, retire, restore and a scope change', async () => {
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      const doc = toolDocument({ name, description: 'Frobnicate a zorblax widget.', summary: undefined });
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
      expect(await found('zorblax')).toBe(true);

      expect((await call(ctx.app, 'DELETE', `/v1/tools/${name}`, { token: publisher })).statusCode).toBe(200);
      expect(await postings()).toEqual([]);
      expect(await found('zorblax')).toBe(false);

      // Restoring with identical content rebuilds them.
      expect((await call(ctx.app, 'PUT', `/v1/tools/${name}`, { token: publisher, body: doc })).statusCode).toBe(200);
      expect(await found('zorblax')).toBe(true);

      const guarded = { ...doc, version: '1.1.0', required_scopes: ['widgets:admin'] };
      expect((await call(ctx.app, 'PUT', `/v1/tools/${name}`, { token: publisher, body: guarded })).statusCode).toBe(200);
      const rows = await postings();
      expect(rows).toHaveLength(1);
      expect(rows[0]!.required_scopes).toEqual(['widgets:admin']);
      expect(await found('zorblax')).toBe(false);
      expect(await found('zorblax', ['widgets:admin'])).toBe(true);
    });

    it('on a learned alias: the query\'s words become searchable', async () => {
      const scopes = ['widgets:admin'];
      expect(await found('quuxify the gadget', scopes)).toBe(false);
      // Three distinct subjects teach it (the default LEARNED_ALIAS_MIN_SUBJECTS) ...
      for (const sub of ['agent-1', 'agent-2', 'agent-3']) {
        const agent = await token({ tenant, scopes, sub });
        const offered = await call(ctx.app, 'POST', '/v1/discover', { token: agent, body: { query: 'quuxify the gadget' } });
        const decision = await call(ctx.app, 'POST', '/v1/authorize', {
          token: agent,
          body: { tool: name, arguments: { invoice_id: 'x' }, discovery_id: offered.json<DiscoverResponse>().discovery_id },
        });
        expect(decision.json().decision).toBe('allow');
      }
      // ... and, the tool having side effects, a publisher approves it.
      expect(await found('quuxify', scopes)).toBe(false);
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      const [alias] = (await call(ctx.app, 'GET', `/v1/tools/${name}/learned-aliases`, { token: publisher })).json<{ learned_aliases: { id: number }[] }>().learned_aliases;
      expect((await call(ctx.app, 'POST', `/v1/tools/${name}/learned-aliases/${alias!.id}/approve`, { token: publisher })).statusCode).toBe(200);
      expect(await found('quuxify', scopes)).toBe(true);
    });
  });
});
