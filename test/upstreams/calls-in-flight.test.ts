import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';

import { buildTestApp, call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { serveStateless } from '../helpers/mcp-upstreams.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

/**
 * A tenant's calls running upstream at once are bounded (UPSTREAM_MAX_CALLS_IN_FLIGHT): each holds
 * a socket and up to a response's worth of memory, so a tenant's slow upstream must not fill the
 * process for every tenant. Through POST /v1/call, against a real MCP server whose tool answers
 * when the test lets it.
 */
forEachDatabase((db) => {
  describe('calls in flight to upstreams', () => {
    let app: FastifyInstance;
    let stop: () => Promise<void>;
    const waiting: (() => void)[] = [];
    let started = 0;
    const tenant = uniqueTenant('in-flight');
    const other = uniqueTenant('in-flight-other');

    beforeAll(async () => {
      const served = await serveStateless((mcp) => {
        mcp.registerTool('slow', { description: 'Answers once the test lets it.', inputSchema: { text: z.string().describe('Any text') } }, async ({ text }) => {
          started += 1;
          await new Promise<void>((resolve) => waiting.push(resolve));
          return { content: [{ type: 'text', text: `slow: ${text}` }] };
        });
      });
      stop = served.stop;
      app = await buildTestApp({ database: db.database, env: { UPSTREAM_ALLOWED_URLS: new URL(served.url).origin, UPSTREAM_SYNC_INTERVAL_MS: '0', UPSTREAM_MAX_CALLS_IN_FLIGHT: '1' } });
      for (const t of [tenant, other]) {
        const registered = await call(app, 'POST', '/v1/upstreams', { token: await token({ tenant: t, scopes: [PUBLISH] }), body: { name: 'waiter', url: served.url } });
        expect(registered.statusCode).toBe(201);
      }
    }, 60_000);
    afterAll(async () => {
      waiting.forEach((release) => release());
      await app?.close();
      await stop?.();
    });

    const slowCall = async (t: string, text: string) => call(app, 'POST', '/v1/call', { token: await token({ tenant: t, scopes: [] }), body: { tool: 'waiter_slow', arguments: { text } } });
    const until = async (probe: () => boolean) => {
      for (let i = 0; i < 500 && !probe(); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(probe()).toBe(true);
    };

    it("refuses a tenant's call past its bound with 429, leaves other tenants' calls alone, and takes calls again once one ends", async () => {
      const first = slowCall(tenant, 'one');
      await until(() => started === 1);
      const refused = await slowCall(tenant, 'two');
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ error: { code: 'rate_limited' } });
      // Another tenant's bound is its own.
      const others = slowCall(other, 'three');
      await until(() => started === 2);
      waiting.splice(0).forEach((release) => release());
      expect((await first).statusCode).toBe(200);
      expect((await others).statusCode).toBe(200);
      const again = slowCall(tenant, 'four');
      await until(() => started === 3);
      waiting.splice(0).forEach((release) => release());
      expect((await again).json()).toMatchObject({ decision: 'allow', result: { content: [{ type: 'text', text: 'slow: four' }] } });
    });
  });
});
