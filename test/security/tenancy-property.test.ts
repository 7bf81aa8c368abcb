import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';

import { useDiscoveryApp } from '../discovery/helpers.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

const WORDS = ['refund', 'invoice', 'deploy', 'server', 'ticket', 'partition'];
const SCOPES = ['billing:read', 'billing:admin', 'ops:write'];

const toolArb = fc.record({ owner: fc.constantFrom('a', 'b'), scopes: fc.subarray(SCOPES), retired: fc.boolean(), word: fc.constantFrom(...WORDS) });
const scenarioArb = fc.record({
  tools: fc.array(toolArb, { minLength: 1, maxLength: 6 }),
  caller: fc.record({ tenant: fc.constantFrom('a', 'b', 'c'), scopes: fc.subarray(SCOPES), publisher: fc.boolean() }),
  query: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')),
});

interface Published {
  name: string;
  owner: string;
  scopes: string[];
  retired: boolean;
}

/** A stateless MCP JSON-RPC call through inject (no SDK client: one request, one answer). */
async function mcp(app: FastifyInstance, tokenValue: string, name: string, args: Record<string, unknown>) {
  const res = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { authorization: `Bearer ${tokenValue}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
  });
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  return res.json().result as { isError?: boolean; content: { text: string }[]; structuredContent?: { tools?: { name: string }[] } };
}

const withoutRequestId = (body: string) => body.replace(/"request_id":"[^"]*"/, '"request_id":"-"');

/**
 * The tenancy property on every database leg: random catalogs in two tenants, a random caller
 * (tenant, scopes, publisher or not), every endpoint. Nothing of another tenant and no tool beyond
 * the caller's scopes is ever returned or acted on, and refusals look exactly like "no such tool".
 */
forEachDatabase((db) => {
  describe('tenancy and scope property, every endpoint', () => {
    const ctx = useDiscoveryApp(db, () => new HashingEmbedder(), { LEARNED_ALIAS_MIN_SUBJECTS: '2' });

    it('never returns or acts on a tool the caller may not see, and hides existence', async () => {
      await fc.assert(
        fc.asyncProperty(scenarioArb, async (scenario) => {
          const app = ctx.app;
          const tenants: Record<string, string> = { a: uniqueTenant('prop-a'), b: uniqueTenant('prop-b'), c: uniqueTenant('prop-c') };
          const published: Published[] = [];
          for (const [i, spec] of scenario.tools.entries()) {
            const name = `${spec.owner}${i}_${spec.word}`;
            const publisher = await token({ tenant: tenants[spec.owner]!, scopes: [PUBLISH] });
            const doc = toolDocument({ name, description: `${spec.word} tool number ${i}.`, required_scopes: spec.scopes, aliases: [spec.word] });
            expect((await call(app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
            if (spec.retired) expect((await call(app, 'DELETE', `/v1/tools/${name}`, { token: publisher })).statusCode).toBe(200);
            published.push({ name, owner: spec.owner, scopes: spec.scopes, retired: spec.retired });
          }
          const { caller } = scenario;
          const callerScopes = caller.publisher ? [...caller.scopes, PUBLISH] : caller.scopes;
          const tk = await token({ tenant: tenants[caller.tenant]!, scopes: callerScopes, sub: 'prop-caller' });
          const own = (tool: Published) => tool.owner === caller.tenant;
          const usable = (tool: Published) => own(tool) && !tool.retired && tool.scopes.every((s) => caller.scopes.includes(s));
          const gettable = (tool: Published) => own(tool) && (caller.publisher || usable(tool));
          const byName = new Map(published.map((tool) => [tool.name, tool]));
          const foreignOrUnknown = (name: string) => !byName.has(name) || !own(byName.get(name)!);

          const missing = await call(app, 'GET', '/v1/tools/zz_missing', { token: tk });
          const missingAuthorize = await call(app, 'POST', '/v1/authorize', { token: tk, body: { tool: 'zz_missing', arguments: {} } });
          const missingMcp = await mcp(app, tk, 'describe_tool', { name: 'zz_missing' });

          for (const tool of [...published, { name: 'zz_other', owner: 'x', scopes: [], retired: false }]) {
            const get = await call(app, 'GET', `/v1/tools/${tool.name}`, { token: tk });
            if (gettable(tool)) expect(get.statusCode).toBe(200);
            else {
              expect(get.statusCode).toBe(404);
              expect(withoutRequestId(get.body)).toBe(withoutRequestId(missing.body).replace('zz_missing', tool.name));
            }
            const versions = await call(app, 'GET', `/v1/tools/${tool.name}/versions`, { token: tk });
            expect(versions.statusCode).toBe(!caller.publisher ? 403 : gettable(tool) ? 200 : 404);
            const learned = await call(app, 'GET', `/v1/tools/${tool.name}/learned-aliases`, { token: tk });
            expect(learned.statusCode).toBe(!caller.publisher ? 403 : own(tool) ? 200 : 404);

            const authorize = await call(app, 'POST', '/v1/authorize', { token: tk, body: { tool: tool.name, arguments: { invoice_id: 'inv-1' } } });
            expect(authorize.statusCode).toBe(200);
            const decision = authorize.json() as { decision: string };
            if (usable(tool)) expect(decision.decision).toBe('allow');
            else {
              expect(decision.decision).toBe('deny');
              const retiredButVisible = own(tool) && tool.retired && tool.scopes.every((s) => caller.scopes.includes(s));
              if (!retiredButVisible) expect(authorize.body).toBe(missingAuthorize.body.replaceAll('zz_missing', tool.name));
            }

            const described = await mcp(app, tk, 'describe_tool', { name: tool.name });
            if (usable(tool)) expect(described.isError ?? false).toBe(false);
            else expect(described).toEqual(JSON.parse(JSON.stringify(missingMcp).replaceAll('zz_missing', tool.name)));

            // Writes on another tenant's tool: 404, and the owner's tool is untouched.
            if (caller.publisher && foreignOrUnknown(tool.name)) {
              const update = await call(app, 'PUT', `/v1/tools/${tool.name}`, { token: tk, body: toolDocument({ name: tool.name, version: '9.0.0' }) });
              expect(update.statusCode).toBe(404);
              expect((await call(app, 'DELETE', `/v1/tools/${tool.name}`, { token: tk })).statusCode).toBe(404);
            }
          }

          const listed = await call(app, 'GET', '/v1/tools?limit=200&include_retired=true', { token: tk });
          for (const card of listed.json().tools as { name: string }[]) expect(gettable(byName.get(card.name)!)).toBe(true);
          const discovered = await call(app, 'POST', '/v1/discover', { token: tk, body: { query: scenario.query, top_k: 10 } });
          for (const tool of discovered.json().tools as { name: string }[]) expect(usable(byName.get(tool.name)!), tool.name).toBe(true);
          const found = await mcp(app, tk, 'find_tools', { query: scenario.query, top_k: 10 });
          for (const tool of found.structuredContent?.tools ?? []) expect(usable(byName.get(tool.name)!), tool.name).toBe(true);

          // Publisher reports carry only the caller's tenant: its own tools, or what it asked for itself.
          const reports = ['/v1/audit?limit=500', '/v1/discoveries?limit=200', '/v1/reports/misses?days=1'];
          for (const url of reports) {
            const res = await call(app, 'GET', url, { token: tk });
            expect(res.statusCode).toBe(caller.publisher ? 200 : 403);
            if (!caller.publisher) continue;
            for (const tool of published.filter((p) => !own(p))) {
              if (url.startsWith('/v1/audit')) {
                const entries = (res.json().entries as { action: string; tool: { name: string; version: string | null }; reasons: unknown }[]).filter((e) => e.tool.name === tool.name);
                // Only the caller's own attempts on the name, which reveal nothing.
                for (const entry of entries) expect(entry).toMatchObject({ action: 'authorize', tool: { version: null }, reasons: [{ code: 'unknown_tool' }] });
              } else expect(res.body).not.toContain(`"${tool.name}"`);
            }
          }
          // Another tenant's tools were never touched by the caller.
          for (const tool of published.filter((p) => !own(p))) {
            const owner = await token({ tenant: tenants[tool.owner]!, scopes: [PUBLISH] });
            const row = (await call(app, 'GET', `/v1/tools/${tool.name}`, { token: owner })).json() as { version: string; status: string };
            expect(row).toMatchObject({ version: '1.0.0', status: tool.retired ? 'retired' : 'active' });
          }
        }),
        { numRuns: 12 },
      );
    }, 120_000);
  });
});
