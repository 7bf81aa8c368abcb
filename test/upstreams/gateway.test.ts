import type { AddressInfo } from 'node:net';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { findAndCall } from '../../examples/gateway.js';
import { buildApp } from '../../src/app.js';
import { rowsOf } from '../../src/db/client.js';
import { call, testConfig, testDependencies } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { type EverythingServer, type LiveServer, type ScriptedServer, startEverything, startLive, startScripted } from '../helpers/mcp-upstreams.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

const SECRET = 'sk-upstream-credential-4f1d9c27b8e6';
const KEY = 'a'.repeat(64);

interface Upstream {
  name: string;
  url: string;
  status: string;
  tools: number;
  synced_at: string | null;
  sync: { added: string[]; changed: string[]; retired: string[]; errors: { tool: string | null; message: string }[] };
}

/**
 * The MCP gateway against real MCP servers, on every database leg: the reference server
 * (server-everything over streamable HTTP, a child process on a free port) and a scripted SDK
 * server whose tool list the test changes. The app listens on 127.0.0.1 so the SDK client can
 * reach /mcp; its log lines are kept to check that no secret is ever written.
 */
forEachDatabase((db) => {
  describe('MCP gateway (upstreams, /v1/call, call_tool)', () => {
    const tenant = uniqueTenant('gateway');
    const logLines: string[] = [];
    let app: FastifyInstance;
    let everything: EverythingServer;
    let scripted: ScriptedServer;
    let live: LiveServer;
    let publisher: string;
    let agent: string;
    let base: string;

    beforeAll(async () => {
      everything = await startEverything();
      scripted = await startScripted(['alpha', 'beta']);
      live = await startLive(['one']);
      const allowed = [everything.url, scripted.url, live.url].map((u) => new URL(u).origin).join(',');
      const config = testConfig({ UPSTREAM_ALLOWED_URLS: allowed, UPSTREAM_SECRET_KEY: KEY, UPSTREAM_SYNC_INTERVAL_MS: '0', LOG_LEVEL: 'info' });
      const logger = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
      app = await buildApp(testDependencies(config, db.database), logger);
      await app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      publisher = await token({ tenant, scopes: [PUBLISH], sub: 'publisher' });
      agent = await token({ tenant, scopes: ['demo:use'], sub: 'agent' });
    }, 60_000);

    afterAll(async () => {
      await app?.close();
      await everything?.stop();
      await scripted?.stop();
      await live?.stop();
    });

    const register = async (body: Record<string, unknown>, tokenValue = publisher) => call(app, 'POST', '/v1/upstreams', { token: tokenValue, body });

    it('registers server-everything: its tools become <upstream>_<tool> tools of the tenant, synced at once', async () => {
      const response = await register({ name: 'everything', url: everything.url, headers: { authorization: `Bearer ${SECRET}` }, required_scopes: ['demo:use'] });
      expect(response.statusCode).toBe(201);
      const body = response.json<Upstream>();
      expect(body).toMatchObject({ name: 'everything', url: everything.url, status: 'ok' });
      expect(body.sync.added).toContain('everything_get-sum');
      expect(body.tools).toBe(body.sync.added.length);
      expect(body.synced_at).not.toBeNull();
      const tool = await call(app, 'GET', '/v1/tools/everything_get-sum', { token: publisher });
      expect(tool.json()).toMatchObject({ required_scopes: ['demo:use'], side_effects: false, 'x-mcp': { tool: 'get-sum' } });
    });

    it('finds the sum tool for "add the numbers 17 and 25"', async () => {
      const response = await call(app, 'POST', '/v1/discover', { token: agent, body: { query: 'add the numbers 17 and 25', top_k: 3 } });
      expect(response.statusCode).toBe(200);
      expect(response.json<{ tools: { name: string }[] }>().tools.map((t) => t.name)).toContain('everything_get-sum');
    });

    it('calls the tool through POST /v1/call: 42, audited with its upstream', async () => {
      const response = await call(app, 'POST', '/v1/call', { token: agent, body: { tool: 'everything_get-sum', arguments: { a: 17, b: 25 } } });
      expect(response.statusCode).toBe(200);
      const body = response.json<{ decision: string; result: CallToolResult }>();
      expect(body.decision).toBe('allow');
      expect(body.result.content[0]).toEqual({ type: 'text', text: 'The sum of 17 and 25 is 42.' });
      const audit = await call(app, 'GET', '/v1/audit?tool=everything_get-sum', { token: publisher });
      const entries = audit.json<{ entries: { action: string; decision: string | null; details?: Record<string, unknown> }[] }>().entries;
      expect(entries.find((e) => e.action === 'call')).toMatchObject({ decision: 'allow' });
      expect(entries.find((e) => e.action === 'call_result')?.details).toMatchObject({ upstream: 'everything', outcome: 'ok' });
    });

    it('runs a strict-mode call (null for an optional argument) upstream as the call without it', async () => {
      // includeImage is optional and boolean upstream: a null sent on would be refused there.
      const body = { tool: 'everything_get-annotated-message', arguments: { messageType: 'success', includeImage: null } };
      const response = await call(app, 'POST', '/v1/call', { token: agent, body });
      expect(response.statusCode, response.body).toBe(200);
      const result = response.json<{ decision: string; result: CallToolResult }>().result;
      expect(result.isError ?? false).toBe(false);
      expect(result.content[0]).toMatchObject({ type: 'text', text: 'Operation completed successfully' });
    });

    it('calls the tool through MCP call_tool with a client connected only to the registry', async () => {
      const client = new Client({ name: 'gateway-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent}` } } }));
      try {
        const listed = await client.listTools();
        expect(listed.tools.map((t) => t.name).sort()).toEqual(['call_tool', 'describe_tool', 'find_tools']);
        const found = (await client.callTool({ name: 'find_tools', arguments: { query: 'add the numbers 17 and 25' } })) as CallToolResult;
        expect(JSON.stringify(found.structuredContent)).toContain('everything_get-sum');
        const result = (await client.callTool({ name: 'call_tool', arguments: { name: 'everything_get-sum', arguments: { a: 17, b: 25 } } })) as CallToolResult;
        expect(result.isError).not.toBe(true);
        expect(result.content[0]).toEqual({ type: 'text', text: 'The sum of 17 and 25 is 42.' });
        const denied = (await client.callTool({ name: 'call_tool', arguments: { name: 'everything_get-sum', arguments: { a: 'seventeen' } } })) as CallToolResult;
        expect(denied.isError).toBe(true);
        expect(JSON.stringify(denied.content)).toContain('invalid_arguments');
      } finally {
        await client.close();
      }
    });

    it('runs examples/gateway.ts: a client connected only to the registry finds the sum tool and gets 42', async () => {
      const turn = await findAndCall(base, agent, 'add the numbers 17 and 25', { a: 17, b: 25 });
      expect(turn.called).toBe('everything_get-sum');
      expect(turn.result?.content[0]).toEqual({ type: 'text', text: 'The sum of 17 and 25 is 42.' });
    });

    it('refuses a caller without the upstream\'s scope, and invalid arguments, before the upstream is contacted', async () => {
      const stranger = await token({ tenant, scopes: ['other:use'], sub: 'stranger' });
      const before = everything.posts;
      const unseen = await call(app, 'POST', '/v1/call', { token: stranger, body: { tool: 'everything_get-sum', arguments: { a: 1, b: 2 } } });
      expect(unseen.statusCode).toBe(404);
      expect(unseen.json()).toMatchObject({ error: { code: 'not_found', message: "tool 'everything_get-sum' not found" } });
      const invalid = await call(app, 'POST', '/v1/call', { token: agent, body: { tool: 'everything_get-sum', arguments: { a: 'x' } } });
      expect(invalid.statusCode).toBe(403);
      const decision = invalid.json<{ decision: string; reasons: { code: string; pointer?: string }[] }>();
      expect(decision.decision).toBe('deny');
      expect(decision.reasons.map((r) => [r.code, r.pointer])).toEqual(expect.arrayContaining([['invalid_arguments', '/arguments/a'], ['invalid_arguments', '/arguments/b']]));
      expect(everything.posts).toBe(before);
    });

    it('shows another tenant nothing: no upstream, no tools, no call', async () => {
      const other = await token({ tenant: uniqueTenant('gateway-other'), scopes: [PUBLISH, 'demo:use'] });
      expect((await call(app, 'GET', '/v1/upstreams', { token: other })).json()).toEqual({ upstreams: [] });
      expect((await call(app, 'GET', '/v1/upstreams/everything', { token: other })).statusCode).toBe(404);
      expect((await call(app, 'POST', '/v1/upstreams/everything/sync', { token: other })).statusCode).toBe(404);
      expect((await call(app, 'DELETE', '/v1/upstreams/everything', { token: other })).statusCode).toBe(404);
      expect((await call(app, 'GET', '/v1/tools/everything_get-sum', { token: other })).statusCode).toBe(404);
      expect((await call(app, 'POST', '/v1/call', { token: other, body: { tool: 'everything_get-sum', arguments: { a: 1, b: 2 } } })).statusCode).toBe(404);
    });

    it('refuses URLs outside UPSTREAM_ALLOWED_URLS, credentials in URLs, and callers without registry:publish', async () => {
      const outside = await register({ name: 'evil', url: 'http://169.254.169.254/latest' });
      expect(outside.statusCode).toBe(400);
      expect(outside.json()).toMatchObject({ error: { details: [{ pointer: '/url' }] } });
      const lookalike = await register({ name: 'evil', url: `${new URL(everything.url).origin}.attacker.test/mcp` });
      expect(lookalike.statusCode).toBe(400);
      const credentials = await register({ name: 'evil', url: everything.url.replace('http://', 'http://user:pw@') });
      expect(credentials.statusCode).toBe(400);
      expect((await register({ name: 'evil', url: everything.url }, agent)).statusCode).toBe(403);
      expect((await register({ name: 'everything', url: everything.url })).statusCode).toBe(409);
    });

    it('adds and retires tools on a forced sync, keeping a publisher\'s aliases, and sends the headers only upstream', async () => {
      const first = await register({ name: 'scripted', url: scripted.url, headers: { 'x-api-key': SECRET } });
      expect(first.json<Upstream>().sync.added.sort()).toEqual(['scripted_alpha', 'scripted_beta']);
      expect(scripted.lastHeaders['x-api-key']).toBe(SECRET);
      scripted.tools.delete('beta');
      scripted.tools.add('gamma');
      const synced = await call(app, 'POST', '/v1/upstreams/scripted/sync', { token: publisher });
      expect(synced.statusCode).toBe(200);
      expect(synced.json<Upstream>().sync).toEqual({ added: ['scripted_gamma'], changed: [], retired: ['scripted_beta'], errors: [] });
      expect((await call(app, 'GET', '/v1/tools/scripted_beta', { token: publisher })).json()).toMatchObject({ status: 'retired' });
      const again = await call(app, 'POST', '/v1/upstreams/scripted/sync', { token: publisher });
      expect(again.json<Upstream>().sync).toEqual({ added: [], changed: [], retired: [], errors: [] });
    });

    it('syncs when an open session hears notifications/tools/list_changed', async () => {
      const first = await register({ name: 'live', url: live.url });
      expect(first.json<Upstream>().sync.added).toEqual(['live_one']);
      live.addTool('two');
      // The notification arrives on the session's stream; the sync it starts runs in the background.
      await vi.waitFor(async () => expect((await call(app, 'GET', '/v1/tools/live_two', { token: publisher })).statusCode).toBe(200), { timeout: 20_000, interval: 100 });
      expect((await call(app, 'GET', '/v1/upstreams/live', { token: publisher })).json()).toMatchObject({ status: 'ok', tools: 2 });
    });

    it('marks an unreachable upstream degraded, keeps its tools discoverable and answers calls 502/503, never 500', async () => {
      await everything.stop();
      const sync = await call(app, 'POST', '/v1/upstreams/everything/sync', { token: publisher });
      expect(sync.statusCode).toBe(200);
      const body = sync.json<Upstream>();
      expect(body.status).toBe('degraded');
      expect(body.sync.errors[0]?.tool).toBeNull();
      expect((await call(app, 'GET', '/v1/tools/everything_get-sum', { token: agent })).statusCode).toBe(200);
      const failed = await call(app, 'POST', '/v1/call', { token: agent, body: { tool: 'everything_get-sum', arguments: { a: 1, b: 2 } } });
      expect([502, 503]).toContain(failed.statusCode);
      expect(failed.json()).toMatchObject({ error: { code: expect.stringMatching(/^(bad_gateway|unavailable)$/) } });
    });

    it('never echoes a header value: not in any response, nor in any log line', async () => {
      const responses = [
        await call(app, 'GET', '/v1/upstreams', { token: publisher }),
        await call(app, 'GET', '/v1/upstreams/everything', { token: publisher }),
        await call(app, 'GET', '/v1/upstreams/scripted', { token: publisher }),
        await call(app, 'GET', '/v1/audit', { token: publisher }),
      ];
      for (const response of responses) {
        expect(response.statusCode).toBe(200);
        expect(response.body).not.toContain(SECRET);
      }
      expect(responses[1]!.json()).toMatchObject({ has_headers: true });
      expect(logLines.length).toBeGreaterThan(0);
      expect(logLines.join('\n')).not.toContain(SECRET);
      const [row] = await rowsOf<{ headers: string }>(db.database.db.execute(sql`select headers from upstreams where tenant_id = ${tenant} and name = 'everything'`));
      expect(row?.headers).toBeTruthy();
      expect(row?.headers).not.toContain(SECRET);
    });

    it('retires every tool of a deleted upstream', async () => {
      expect((await call(app, 'DELETE', '/v1/upstreams/scripted', { token: publisher })).statusCode).toBe(204);
      expect((await call(app, 'GET', '/v1/upstreams/scripted', { token: publisher })).statusCode).toBe(404);
      expect((await call(app, 'GET', '/v1/tools/scripted_alpha', { token: publisher })).json()).toMatchObject({ status: 'retired' });
    });
  });
});
