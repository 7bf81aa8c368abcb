import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import authPlugin from '../../src/auth/plugin.js';
import { AppError } from '../../src/errors.js';
import errorHandler from '../../src/http/error-handler.js';
import principalRateLimit from '../../src/http/rate-limit.js';
import { call, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { token, uniqueTenant } from '../helpers/tokens.js';

/** Per-principal limits: discovery and MCP through the real app, authorize through a stand-in route. */
forEachDatabase((db) => {
  describe('rate limiting per principal', () => {
    const ctx = useApp(db, { RATE_LIMIT_DISCOVER_PER_MINUTE: '3', RATE_LIMIT_MCP_PER_MINUTE: '2', RATE_LIMIT_AUTHORIZE_PER_MINUTE: '2', RATE_LIMIT_PUBLISH_PER_MINUTE: '2' });
    const tenant = uniqueTenant('rl');
    const discover = (tokenValue: string) => call(ctx.app, 'POST', '/v1/discover', { token: tokenValue, body: { query: 'refund an invoice' } });

    it('answers 429 with Retry-After and the contract error once a principal spends its budget', async () => {
      const caller = await token({ tenant, sub: 'busy-agent' });
      const statuses: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        const response = await discover(caller);
        statuses.push(response.statusCode);
        expect(response.headers['x-ratelimit-limit']).toBe('3');
        expect(response.headers['x-ratelimit-remaining']).toBe(String(2 - i));
      }
      expect(statuses).toEqual([200, 200, 200]);
      const limited = await discover(caller);
      expect(limited.statusCode).toBe(429);
      const retryAfter = Number(limited.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      const body = limited.json<{ error: { code: string; message: string; request_id: string } }>();
      expect(body.error.code).toBe('rate_limited');
      expect(body.error.message).toMatch(/3 requests per minute/);
      expect(body.error.request_id).toBe(limited.headers['x-request-id']);
    });

    it('gives publishing, dry runs included, its own budget per principal (issue 32, finding 5)', async () => {
      const publisher = await token({ tenant, sub: 'busy-publisher', scopes: ['registry:publish'] });
      const statuses: number[] = [];
      for (let i = 0; i < 3; i += 1) {
        statuses.push((await call(ctx.app, 'POST', '/v1/tools?dry_run=true', { token: publisher, body: toolDocument({ name: `dry_${i}` }) })).statusCode);
      }
      expect(statuses).toEqual([200, 200, 429]);
      // PUT spends a budget of the same size (the limiter counts per route).
      const puts: number[] = [];
      for (let i = 0; i < 3; i += 1) puts.push((await call(ctx.app, 'PUT', '/v1/tools/dry_0?dry_run=true', { token: publisher, body: toolDocument({ name: 'dry_0' }) })).statusCode);
      expect(puts).toEqual([404, 404, 429]);
      const other = await token({ tenant, sub: 'other-publisher', scopes: ['registry:publish'] });
      expect((await call(ctx.app, 'POST', '/v1/tools?dry_run=true', { token: other, body: toolDocument({ name: 'dry_x' }) })).statusCode).toBe(200);
    });

    it('keeps separate budgets per subject and per tenant', async () => {
      const first = await token({ tenant, sub: 'agent-a' });
      for (let i = 0; i < 4; i += 1) await discover(first);
      expect((await discover(first)).statusCode).toBe(429);
      expect((await discover(await token({ tenant, sub: 'agent-b' }))).statusCode).toBe(200);
      expect((await discover(await token({ tenant: uniqueTenant('rl'), sub: 'agent-a' }))).statusCode).toBe(200);
    });

    it('leaves other routes alone and checks the token before counting', async () => {
      const caller = await token({ tenant, sub: 'lister' });
      for (let i = 0; i < 5; i += 1) expect((await call(ctx.app, 'GET', '/v1/tools', { token: caller })).statusCode).toBe(200);
      expect((await call(ctx.app, 'POST', '/v1/discover', { body: { query: 'x' } })).statusCode).toBe(401);
    });

    it('limits POST /v1/authorize with its own budget', async () => {
      const gateway = await token({ tenant, sub: 'gateway' });
      const authorize = () => call(ctx.app, 'POST', '/v1/authorize', { token: gateway, body: { tool: 'no_such_tool', arguments: {} } });
      expect((await authorize()).statusCode).toBe(200);
      expect((await authorize()).statusCode).toBe(200);
      const limited = await authorize();
      expect(limited.statusCode).toBe(429);
      expect(limited.json<{ error: { code: string } }>().error.code).toBe('rate_limited');
      // The discovery budget of the same principal is untouched.
      expect((await discover(gateway)).statusCode).toBe(200);
    });

    it('limits /mcp with its own budget, in the contract format', async () => {
      const caller = await token({ tenant, sub: 'mcp-agent' });
      const post = () =>
        call(ctx.app, 'POST', '/mcp', {
          token: caller,
          headers: { accept: 'application/json, text/event-stream' },
          body: { jsonrpc: '2.0', id: 1, method: 'ping' },
        });
      await post();
      await post();
      const limited = await post();
      expect(limited.statusCode).toBe(429);
      expect(limited.headers['retry-after']).toBeDefined();
      expect(limited.json<{ error: { code: string } }>().error.code).toBe('rate_limited');
    });
  });

  describe('rate limiting switched off', () => {
    const ctx = useApp(db, { RATE_LIMIT_DISCOVER_PER_MINUTE: '0' });
    it('never answers 429 when the limit is 0', async () => {
      const caller = await token({ tenant: uniqueTenant('rl-off') });
      for (let i = 0; i < 8; i += 1) {
        const response = await call(ctx.app, 'POST', '/v1/discover', { token: caller, body: { query: 'refund' } });
        expect(response.statusCode).toBe(200);
        expect(response.headers['x-ratelimit-limit']).toBeUndefined();
      }
    });
  });
});

/** /v1/authorize is limited by URL as soon as its route is registered: shown with a stand-in route. */
describe('rate limiting of POST /v1/authorize', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = Fastify();
    await app.register(errorHandler);
    await app.register(authPlugin, {
      verify: async (value: string) => {
        if (!value.startsWith('ok-')) throw new AppError('unauthorized', 'token is invalid');
        return { tenant: 't', subject: value, scopes: [] };
      },
    });
    await app.register(principalRateLimit, { limits: { discoverPerMinute: 100, authorizePerMinute: 2, mcpPerMinute: 100, publishPerMinute: 100 } });
    await app.register(async (api) => {
      api.addHook('onRequest', api.authenticate);
      api.post('/v1/authorize', async () => ({ decision: 'allow' }));
      api.post('/v1/other', { config: { principalRateLimit: 'authorize' } }, async () => ({ ok: true }));
    });
    await app.ready();
  });
  afterAll(async () => app.close());

  const post = (url: string, subject: string) => app.inject({ method: 'POST', url, headers: { authorization: `Bearer ok-${subject}` }, payload: {} });

  it('applies RATE_LIMIT_AUTHORIZE_PER_MINUTE without any change to the authorize routes', async () => {
    expect((await post('/v1/authorize', 'gw')).statusCode).toBe(200);
    expect((await post('/v1/authorize', 'gw')).statusCode).toBe(200);
    const limited = await post('/v1/authorize', 'gw');
    expect(limited.statusCode).toBe(429);
    expect(limited.json<{ error: { code: string } }>().error.code).toBe('rate_limited');
    expect((await post('/v1/authorize', 'other-gw')).statusCode).toBe(200);
  });

  it('lets any route opt in with config.principalRateLimit', async () => {
    await post('/v1/other', 'opt');
    await post('/v1/other', 'opt');
    expect((await post('/v1/other', 'opt')).statusCode).toBe(429);
  });
});
