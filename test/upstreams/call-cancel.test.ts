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
 * the tenant's calls in flight (UPSTREAM_MAX_CALLS_IN_FLIGHT, here 2) is free once its stream to
 * the upstream is closed, not when the upstream answers. The upstream's tool never answers on its
 * own; it records when its request is aborted (a stateless server: it learns of a cancellation
 * when the request's stream closes). Through POST /v1/call (the connection closed) and MCP
 * call_tool (the connection closed, or notifications/cancelled), against the app listening on a
 * real port.
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
      app = await buildTestApp({ database: db.database, env: { UPSTREAM_ALLOWED_URLS: new URL(served.url).origin, UPSTREAM_SYNC_INTERVAL_MS: '0', UPSTREAM_MAX_CALLS_IN_FLIGHT: '2' } });
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
    const quick = () => call(app, 'POST', '/v1/call', { token: agent, body: { tool: 'slow_hang', arguments: { text: 'quick' } } });
    /** Two quick calls at once both answer 200: both of the tenant's places in flight are free. */
    const placesAreFree = async () => {
      expect((await Promise.all([quick(), quick()])).map((r) => r.statusCode)).toEqual([200, 200]);
    };
    const restCall = (text: string, signal: AbortSignal) =>
      fetch(`${base}/v1/call`, {
        method: 'POST',
        headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tool: 'slow_hang', arguments: { text } }),
        signal,
      });
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
      const pending = restCall('rest', gone.signal);
      await until(() => started.includes('rest'));
      gone.abort();
      await expect(pending).rejects.toThrow();
      await until(() => aborted.includes('rest'));
      await placesAreFree();
      expect(await outcomes()).toContainEqual({ outcome: 'cancelled', error: 'the caller went away before the upstream answered', upstream: 'slow', latency_ms: expect.any(Number) });
    });

    it("keeps a cancelled call's place while its stream stays open with a session another call uses", async () => {
      const [first, second] = [new AbortController(), new AbortController()];
      const pending = [restCall('shared-1', first.signal), restCall('shared-2', second.signal)];
      await until(() => started.includes('shared-1') && started.includes('shared-2'));
      first.abort();
      await expect(pending[0]).rejects.toThrow();
      // The session carries the second call: the first's stream, and so its place, is still held.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(aborted).not.toContain('shared-1');
      expect((await quick()).statusCode).toBe(429);
      second.abort();
      await expect(pending[1]).rejects.toThrow();
      await until(() => aborted.includes('shared-1') && aborted.includes('shared-2'));
      await placesAreFree();
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
      await placesAreFree();
      await client.close();
    });

    it("MCP call_tool: the client's connection closed cancels the upstream call", async () => {
      const client = await connect();
      const pending = client.callTool({ name: 'call_tool', arguments: { name: 'slow_hang', arguments: { text: 'mcp-close' } } });
      await until(() => started.includes('mcp-close'));
      await client.close();
      await expect(pending).rejects.toThrow();
      await until(() => aborted.includes('mcp-close'));
      await placesAreFree();
      expect((await outcomes()).filter((d) => d.outcome === 'cancelled')).toHaveLength(5);
    });

    it('notifications/cancelled cancels only a request sent with the same token', async () => {
      const client = await connect();
      const pending = client.callTool({ name: 'call_tool', arguments: { name: 'slow_hang', arguments: { text: 'not-yours' } } });
      await until(() => started.includes('not-yours'));
      const notify = async (bearer: string) => {
        const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${bearer}` } } });
        await transport.start();
        // The SDK numbers a client's requests from 0: initialize was 0, this call is 1.
        await transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'stop' } });
        await transport.close();
      };
      // Another token of the same tenant and subject: nothing is cancelled.
      await notify(await token({ tenant, scopes: [], sub: 'agent' }));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(aborted).not.toContain('not-yours');
      // The call's own token and id: cancelled.
      await notify(agent);
      await until(() => aborted.includes('not-yours'));
      await expect(pending).resolves.toMatchObject({ isError: true });
      await client.close();
    });
  });
});
