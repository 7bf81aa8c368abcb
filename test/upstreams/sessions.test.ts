import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';

import { UpstreamClients, type UpstreamTarget } from '../../src/upstreams/client.js';
import { serveStateless } from '../helpers/mcp-upstreams.js';

/**
 * Upstream sessions are shared by every tenant's upstreams and bounded: the session evicted to
 * make room for another tenant's upstream must not cut off the calls running on it.
 */
describe('upstream sessions', () => {
  let url: string;
  let stop: () => Promise<void>;
  let release: () => void = () => undefined;
  let started: () => void = () => undefined;

  beforeAll(async () => {
    ({ url, stop } = await serveStateless((mcp) => {
      mcp.registerTool('slow', { description: 'Answers once the test lets it.', inputSchema: { text: z.string() } }, async ({ text }) => {
        started();
        await new Promise<void>((resolve) => (release = resolve));
        return { content: [{ type: 'text', text: `slow: ${text}` }] };
      });
      mcp.registerTool('fast', { description: 'Answers at once.', inputSchema: { text: z.string() } }, ({ text }) => ({ content: [{ type: 'text', text: `fast: ${text}` }] }));
    }));
  });
  afterAll(() => stop());

  const target = (tenant: string): UpstreamTarget => ({ key: `${tenant}/up`, tenant, name: 'up', url, headers: {} });

  it("lets a call finish on a session evicted for another tenant's upstream, then closes it", async () => {
    const clients = new UpstreamClients({ connectTimeoutMs: 5_000, callTimeoutMs: 10_000, maxResponseBytes: 1 << 20, maxSessions: 1 });
    try {
      const running = new Promise<void>((resolve) => (started = resolve));
      const slow = clients.call(target('tenant-a'), 'slow', { text: 'a' });
      await running;
      // Another tenant's upstream takes the only session place.
      expect(await clients.call(target('tenant-b'), 'fast', { text: 'b' })).toMatchObject({ content: [{ type: 'text', text: 'fast: b' }] });
      release();
      expect(await slow).toMatchObject({ content: [{ type: 'text', text: 'slow: a' }] });
      // The evicted session is gone: tenant a's next call opens a new one and works.
      expect(await clients.call(target('tenant-a'), 'fast', { text: 'again' })).toMatchObject({ content: [{ type: 'text', text: 'fast: again' }] });
    } finally {
      release();
      await clients.close();
    }
  });

  it('gives up on an upstream that answers initialize but never the initialized notification, within the connect timeout', async () => {
    // The SDK's own timeout covers the initialize request only; the session must not stay pending for good.
    const silent = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const message = JSON.parse(body) as { id?: number; method: string };
        if (message.method !== 'initialize') return; // never answered
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'silent', version: '1.0.0' } } }));
      });
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const clients = new UpstreamClients({ connectTimeoutMs: 300, callTimeoutMs: 10_000, maxResponseBytes: 1 << 20 });
    const started = performance.now();
    try {
      const stuck: UpstreamTarget = { key: 'tenant-c/silent', tenant: 'tenant-c', name: 'silent', url: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`, headers: {} };
      await expect(clients.call(stuck, 'fast', { text: 'c' })).rejects.toMatchObject({ kind: 'timeout' });
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      await clients.close();
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});
