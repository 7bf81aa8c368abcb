import { beforeAll, describe, expect, it } from 'vitest';

import { call, useApp } from '../helpers/app.js';
import { inProcessDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { expectCleanError } from './helpers.js';

/**
 * Issue 32, finding 9: REST discovery and MCP find_tools had separate budgets (600 + 1,200 a
 * minute per principal). One budget per principal now, whatever the door:
 * RATE_LIMIT_DISCOVER_PER_MINUTE counts both. The limit lives in memory, so one database leg.
 */
describe('one discovery budget per principal, REST and MCP alike', () => {
  const db = inProcessDatabase();
  const ctx = useApp(db, { RATE_LIMIT_DISCOVER_PER_MINUTE: '3', RATE_LIMIT_MCP_PER_MINUTE: '100' });
  const tenant = uniqueTenant('budget');

  beforeAll(async () => {
    const publisher = await token({ tenant, scopes: [PUBLISH] });
    expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: toolDocument() })).statusCode).toBe(201);
  });

  const rest = (tokenValue: string) => call(ctx.app, 'POST', '/v1/discover', { token: tokenValue, body: { query: 'refund an invoice' } });
  const findTools = async (tokenValue: string) => {
    const res = await call(ctx.app, 'POST', '/mcp', {
      token: tokenValue,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'find_tools', arguments: { query: 'refund an invoice' } } },
    });
    expect(res.statusCode).toBe(200);
    return res.json<{ result: { isError?: boolean; content: { text: string }[] } }>().result;
  };

  it('spends one budget through either door: two REST calls and one find_tools exhaust a budget of 3', async () => {
    const caller = await token({ tenant, sub: 'both-doors' });
    const first = await rest(caller);
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-ratelimit-limit']).toBe('3');
    expect(first.headers['x-ratelimit-remaining']).toBe('2');
    expect((await findTools(caller)).isError).toBeUndefined();
    const third = await rest(caller);
    expect(third.statusCode).toBe(200);
    expect(third.headers['x-ratelimit-remaining']).toBe('0');

    const limited = await rest(caller);
    expectCleanError(limited, 429);
    expect(limited.headers['retry-after']).toBeDefined();
    const viaMcp = await findTools(caller);
    expect(viaMcp.isError).toBe(true);
    expect(viaMcp.content[0]!.text).toMatch(/rate limit of 3 requests per minute exceeded/);
  });

  it('starts with find_tools just as well, and leaves other principals their own budget', async () => {
    const caller = await token({ tenant, sub: 'mcp-first' });
    for (let i = 0; i < 3; i += 1) expect((await findTools(caller)).isError).toBeUndefined();
    expectCleanError(await rest(caller), 429);
    expect((await rest(await token({ tenant, sub: 'someone-else' }))).statusCode).toBe(200);
  });
});
