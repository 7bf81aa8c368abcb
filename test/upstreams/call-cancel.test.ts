import type { AddressInfo } from 'node:net';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';

import { buildTestApp, call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { serveStateless } from '../helpers/mcp-upstreams.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

/**
 * A call through the registry whose caller goes away is cancelled upstream, and its place among
 * the tenant's calls in flight (UPSTREAM_MAX_CALLS_IN_FLIGHT, here 1) is free at once, not when the
 * upstream answers. The upstream's tool never answers on its own; it records when its request is
 * aborted. Through POST /v1/call (the connection closed) and MCP call_tool (the connection closed,
 * or notifications/cancelled), against the app listening on a real port.
 */
forEachDatabase((db) => {
  describe('calls whose caller went away', () => {
    let app: FastifyInstance;
    let stop: () => Promise<void>;
    let base: string;
    let publisher: string;
    let agent: string;
    const started: string[] = [];
    const aborted: string[] = [];
    const tenant = uniqueTenant('cancel');

    beforeAll(async () => {
      const served = await serveStateless((mcp) => {
        mcp.registerTool('hang', { description: 'Answers only "quick"; any other text waits until its request is aborted.', inputSchema: { text: z.string().describe('Any text') } }, async ({ text }, { signal }) => {
          if (text === 'quick') return { content: [{ type: 'text', text: 'quick' }] };
          started.push(text);
          await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
          aborted.push(text);
          return { content: [{ type: 'text', text: 'too late' }] };
        });
      });
      stop = served.stop;
      app = await buildTestApp({ database: db.database, env: { UPSTREAM_ALLOWED_URLS: new URL(served.url).origin, UPSTREAM_SYNC_INTERVAL_MS: '0', UPSTREAM_MAX_CALLS_IN_FLIGHT: '1' } });
      await app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      publisher = await token({ tenant, scopes: [PUBLISH], sub: 'publisher' });
      agent = await token({ tenant, scopes: [], sub: 'agent' });
      expect((await call(app, 'POST', '/v1/upstreams', { token: publisher, body: { name: 'slow', url: served.url } })).statusCode).toBe(201);
    }, 60_000);
    afterAll(async () => {
      // The clients' pooled connections opened but never used are not idle to Node: close() would
      // wait the keep-alive timeout for them. Every request of the tests has ended by now.
      app?.server.closeAllConnections();
      await app?.close();
      await stop?.();
    });

    const until = async (probe: () => boolean) => {
      for (let i = 0; i < 500 && !probe(); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(probe()).toBe(true);
    };
    /** A quick call answers 200: the tenant's one place in flight is free. */
    const placeIsFree = async () => {
      const quick = await call(app, 'POST', '/v1/call', { token: agent, body: { tool: 'slow_hang', arguments: { text: 'quick' } } });
      expect(quick.statusCode).toBe(200);
    };
    const outcomes = async () => {
      const audit = await call(app, 'GET', '/v1/audit?tool=slow_hang&action=call_result', { token: publisher });
      expect(audit.statusCode).toBe(200);
      return audit.json<{ entries: { details: { outcome: string; error?: string } }[] }>().entries.map((e) => e.details);
    };
    const connect = async () => {
      const client = new Client({ name: 'cancel-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${agent}` } } }));
      return client;
    };

    it('POST /v1/call: the connection closed cancels the upstream call and frees the place', async () => {
      const gone = new AbortController();
      const pending = fetch(`${base}/v1/call`, {
        method: 'POST',
        headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tool: 'slow_hang', arguments: { text: 'rest' } }),
        signal: gone.signal,
      });
      await until(() => started.includes('rest'));
      // The one place is taken while the call runs.
      expect((await call(app, 'POST', '/v1/call', { token: agent, body: { tool: 'slow_hang', arguments: { text: 'quick' } } })).statusCode).toBe(429);
      gone.abort();
      await expect(pending).rejects.toThrow();
      await until(() => aborted.includes('rest'));
      await placeIsFree();
      expect(await outcomes()).toContainEqual({ outcome: 'cancelled', error: 'the caller went away before the upstream answered', upstream: 'slow', latency_ms: expect.any(Number) });
    });

    it('MCP call_tool: notifications/cancelled from the client cancels the upstream call', async () => {
      const client = await connect();
      const request = new AbortController();
      // The SDK client sends notifications/cancelled (a POST of its own) when the signal aborts.
      const pending = client.callTool({ name: 'call_tool', arguments: { name: 'slow_hang', arguments: { text: 'mcp-cancel' } } }, undefined, { signal: request.signal });
      await until(() => started.includes('mcp-cancel'));
      request.abort('the user stopped it');
      await expect(pending).rejects.toThrow();
      await until(() => aborted.includes('mcp-cancel'));
      await placeIsFree();
      await client.close();
    });

    it("MCP call_tool: the client's connection closed cancels the upstream call", async () => {
      const client = await connect();
      const pending = client.callTool({ name: 'call_tool', arguments: { name: 'slow_hang', arguments: { text: 'mcp-close' } } });
      await until(() => started.includes('mcp-close'));
      await client.close();
      await expect(pending).rejects.toThrow();
      await until(() => aborted.includes('mcp-close'));
      await placeIsFree();
      expect((await outcomes()).filter((d) => d.outcome === 'cancelled')).toHaveLength(3);
    });

    it("another caller's notifications/cancelled with the same request id cancels nothing", async () => {
      const client = await connect();
      const pending = client.callTool({ name: 'call_tool', arguments: { name: 'slow_hang', arguments: { text: 'not-yours' } } });
      await until(() => started.includes('not-yours'));
      // The SDK numbers a client's requests from 0: initialize was 0, this call is 1.
      const stranger = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${await token({ tenant, scopes: [], sub: 'stranger' })}` } } });
      await stranger.start();
      await stranger.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'not mine' } });
      await stranger.close();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(aborted).not.toContain('not-yours');
      await client.close();
      await expect(pending).rejects.toThrow();
      await until(() => aborted.includes('not-yours'));
    });
  });
});
