import { randomUUID } from 'node:crypto';

import { sql } from 'drizzle-orm';
import type { LightMyRequestResponse } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';

import { rowsOf } from '../../src/db/client.js';
import type { DiscoveryLogEntry } from '../../src/discovery/log-repository.js';
import { DiscoveryLogWriter } from '../../src/discovery/log-writer.js';
import { call, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { expectCleanError } from './helpers.js';

/**
 * Issue 32, finding 2, replayed on every database leg: text PostgreSQL cannot store, from a token
 * claim (`sub: "mallory\u0000"`) or an MCP filter (a lone surrogate in a tag), reached the batched
 * discovery log and failed every flush, for every tenant, until restart. Claims are refused at the
 * edge (401), discovery input is checked once in the service for REST and MCP alike (400 / tool
 * error), and the writer drops an entry the database refuses instead of the whole batch.
 */
const mcpCall = (app: Parameters<typeof call>[0], tokenValue: string, args: Record<string, unknown>): Promise<LightMyRequestResponse> =>
  call(app, 'POST', '/mcp', {
    token: tokenValue,
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'find_tools', arguments: args } },
  });

interface ToolResult {
  result: { isError?: boolean; content: { text: string }[] };
}

forEachDatabase((db) => {
  describe('text PostgreSQL cannot store never wedges the discovery log', () => {
    const ctx = useApp(db);
    const tenant = uniqueTenant('wedge');
    let publisher: string;

    beforeAll(async () => {
      publisher = await token({ tenant, sub: 'publisher', scopes: [PUBLISH] });
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: toolDocument() })).statusCode).toBe(201);
    });

    const logged = async (subject: string) => {
      const res = await call(ctx.app, 'GET', '/v1/discoveries?limit=200', { token: publisher });
      expect(res.statusCode).toBe(200);
      return res.json<{ discoveries: { subject: string | null; query: string }[] }>().discoveries.filter((d) => d.subject === subject);
    };

    it('refuses tokens whose sub, tenant or scopes hold NUL or a lone surrogate with 401 naming the claim', async () => {
      const cases: [Parameters<typeof token>[0], string][] = [
        [{ tenant, sub: 'mallory\u0000' }, "'sub'"],
        [{ tenant, sub: 'mallory\ud800' }, "'sub'"],
        [{ tenant: `${tenant}\u0000x` }, "'tenant_id'"],
        [{ tenant, scopes: ['billing:read\u0000'] }, "'scope'"],
      ];
      for (const [claims, named] of cases) {
        const res = await call(ctx.app, 'POST', '/v1/discover', { token: await token(claims), body: { query: 'refund an invoice' } });
        expectCleanError(res, 401);
        expect(res.headers['www-authenticate']).toContain('invalid_token');
        expect(res.json<{ error: { message: string } }>().error.message).toContain(named);
      }
    });

    it('refuses a lone surrogate in a filter through MCP find_tools as through REST, and later discoveries are still logged', async () => {
      const mallory = await token({ tenant, sub: 'mallory' });
      const rest = await call(ctx.app, 'POST', '/v1/discover', { token: mallory, body: { query: 'refund', filters: { tags: ['\ud800'] } } });
      expectCleanError(rest, 400);
      expect(rest.json<{ error: { details: { pointer: string }[] } }>().error.details[0]!.pointer).toBe('/filters/tags/0');

      const mcp = await mcpCall(ctx.app, mallory, { query: 'refund', filters: { tags: ['\ud800'], category: 'a\u0000b' } });
      expect(mcp.statusCode).toBe(200);
      const refused = mcp.json<ToolResult>().result;
      expect(refused.isError).toBe(true);
      expect(refused.content[0]!.text).toMatch(/filters\/tags\/0 must not contain control characters or unpaired surrogates/);
      expect(refused.content[0]!.text).toMatch(/filters\/category/);
      const blank = (await mcpCall(ctx.app, mallory, { query: '  ' })).json<ToolResult>().result;
      expect(blank.content[0]!.text).toBe('query must contain some text');

      // The harm was an empty log for everyone afterwards: a later discovery of another caller is there.
      const alice = await token({ tenant, sub: 'alice' });
      expect((await mcpCall(ctx.app, alice, { query: 'refund an invoice' })).json<ToolResult>().result.isError).toBeUndefined();
      expect((await call(ctx.app, 'POST', '/v1/discover', { token: alice, body: { query: 'give money back' } })).statusCode).toBe(200);
      expect((await logged('alice')).map((d) => d.query).sort()).toEqual(['give money back', 'refund an invoice']);
      expect(await logged('mallory')).toEqual([]);
    });

    it('drops and counts an entry the database refuses, and writes the rest of its batch and every later one', async () => {
      const own = uniqueTenant('poison');
      const warnings: unknown[] = [];
      const writer = new DiscoveryLogWriter(db.database.db, { warn: (obj: unknown) => void warnings.push(obj) }, { maxBuffered: 100, batchSize: 50, flushMs: 60_000 });
      const entry = (subject: string, filters: Record<string, unknown> | null = null): DiscoveryLogEntry => ({
        id: randomUUID(), tenantId: own, subject, query: `q-${subject}`, topK: 3, format: 'openai', filters,
        shortlist: [], searchMode: 'lexical', lowConfidence: true, topScore: null, withheld: 0, latencyMs: 1,
      });
      const poison = [entry('mallory\u0000'), entry('surrogate', { tags: ['\ud800'] })];
      const batch = [entry('a'), poison[0]!, entry('b'), poison[1]!, entry('c')];
      for (const e of batch) writer.append(e);
      await writer.flush();
      for (const e of ['d', 'e']) writer.append(entry(e));
      await writer.flush();

      const rows = await rowsOf<{ subject: string }>(db.database.db.execute(sql`select subject from discovery_log where tenant_id = ${own} order by subject`));
      expect(rows.map((r) => r.subject)).toEqual(['a', 'b', 'c', 'd', 'e']);
      expect(writer.stats).toMatchObject({ written: 5, refused: 2, dropped: 0, buffered: 0 });
      expect(poison.some((e) => writer.isPending(e.id))).toBe(false);
      expect(warnings).toHaveLength(2);
    });
  });
});
