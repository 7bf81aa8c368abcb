import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { discoverOAuthProtectedResourceMetadata } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { beforeAll, describe, expect, it } from 'vitest';

import { useDiscoveryApp } from '../discovery/helpers.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

const run = promisify(execFile);
// The Inspector's CLI mode proper (its `mcp-inspector-cli` bin is a launcher around this file). It
// finds its own package.json relative to the working directory, so it runs from its folder.
const INSPECTOR_DIR = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/inspector-cli/build/', import.meta.url));

/**
 * MCP conformance of /mcp over real HTTP (the app listens on 127.0.0.1:0), on every database leg:
 * RFC 9728 authorization discovery, JSON-RPC errors, batches refused before any discovery runs,
 * no list-changed promise the stateless endpoint cannot keep, and the `mcp` format's title and
 * hints. Checked with the official SDK client and the MCP Inspector's CLI.
 */
forEachDatabase((db) => {
  describe('/mcp protocol conformance', () => {
    const ctx = useDiscoveryApp(db, () => new HashingEmbedder(), { MAX_DESCRIPTION_LENGTH: '4000' });
    const tenant = uniqueTenant('mcp-protocol');
    const longDescription = `Track a freight shipment across carriers. ${'It reports the location, the carrier and the delivery estimate of each leg. '.repeat(30)}`.trim();
    let base: string;
    let publisher: string;
    let reader: string;

    beforeAll(async () => {
      await ctx.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
      publisher = await token({ tenant, scopes: [PUBLISH] });
      reader = await token({ tenant, sub: 'reader' });
      const docs = [
        toolDocument({ name: 'track_shipment', description: longDescription, summary: 'Track a freight shipment.', not_for: 'Not for parcels sent by post; use track_parcel.', side_effects: false, sensitivity: 'low', 'x-mcp': { tool: 'track', annotations: { idempotentHint: true, openWorldHint: true } } }),
        toolDocument({ name: 'issue_refund' }),
      ];
      for (const doc of docs) expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
      await ctx.flush();
    });

    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body });

    it('answers 401 with a WWW-Authenticate challenge naming its RFC 9728 metadata, which the SDK discovers', async () => {
      const response = await post('{"jsonrpc":"2.0","id":1,"method":"tools/list"}');
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource"`);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
      const bad = await post('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', { authorization: 'Bearer not.a.token' });
      expect(bad.headers.get('www-authenticate')).toContain('error="invalid_token"');

      const metadata = await discoverOAuthProtectedResourceMetadata(`${base}/mcp`);
      expect(metadata.resource).toBe(`${base}/mcp`);
      expect(metadata.bearer_methods_supported).toEqual(['header']);
      const root = await (await fetch(`${base}/.well-known/oauth-protected-resource`)).json();
      expect(root).toMatchObject({ resource: base, bearer_methods_supported: ['header'] });
      expect(root).not.toHaveProperty('authorization_servers');
    });

    it('answers malformed JSON with JSON-RPC -32700, not the REST error body', async () => {
      const response = await post('{"jsonrpc": "2.0", "id": 1, "method": ', { authorization: `Bearer ${reader}` });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: expect.any(String) }, id: null });
    });

    it('does not advertise tools.listChanged, and renders the mcp format with a title, the kept hints and the whole description', async () => {
      const own = await token({ tenant, sub: 'sdk-client' });
      const client = new Client({ name: 'conformance-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${own}` } } }));
      try {
        expect(client.getServerCapabilities()?.tools?.listChanged).not.toBe(true);
        const result = (await client.callTool({ name: 'describe_tool', arguments: { name: 'track_shipment' } })) as CallToolResult;
        const schema = (result.structuredContent as { schema: Record<string, unknown> }).schema;
        expect(schema.title).toBe('Track shipment');
        expect(schema.annotations).toEqual({ title: 'Track shipment', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true });
        expect(longDescription.length).toBeGreaterThan(1024);
        expect(schema.description).toBe(`${longDescription}\n\nNot for parcels sent by post; use track_parcel.`);
        const text = (result.content[0] as { text: string }).text;
        expect(text).toContain('Not for parcels sent by post');
        expect(text).not.toContain('Not for: Not for');
      } finally {
        await client.close();
      }
    });

    it('lists and calls the tools through the MCP Inspector CLI', async () => {
      let session = 0;
      const inspect = async (...args: string[]) => {
        const own = await token({ tenant, sub: `inspector-${(session += 1)}` });
        const { stdout } = await run(process.execPath, ['index.js', `${base}/mcp`, '--transport', 'http', ...args, '--header', `Authorization: Bearer ${own}`], { cwd: INSPECTOR_DIR, timeout: 60_000 });
        return JSON.parse(stdout) as Record<string, unknown>;
      };
      const listed = (await inspect('--method', 'tools/list')) as { tools: { name: string }[] };
      expect(listed.tools.map((t) => t.name).sort()).toEqual(['call_tool', 'describe_tool', 'find_tools']);
      const found = (await inspect('--method', 'tools/call', '--tool-name', 'describe_tool', '--tool-arg', 'name=issue_refund')) as { structuredContent: { name: string } };
      expect(found.structuredContent.name).toBe('issue_refund');
      // The Inspector checks structured content against the declared output schema.
      const shortlist = (await inspect('--method', 'tools/call', '--tool-name', 'find_tools', '--tool-arg', 'query=where is my freight shipment')) as {
        structuredContent: { tools: { name: string }[]; searched_query: { bounded: boolean } };
      };
      expect(shortlist.structuredContent.tools[0]?.name).toBe('track_shipment');
      expect(shortlist.structuredContent.searched_query.bounded).toBe(false);
    }, 120_000);
  });

  describe('/mcp batches and the rate limit', () => {
    const ctx = useDiscoveryApp(db, () => new HashingEmbedder(), { RATE_LIMIT_MCP_PER_MINUTE: '3' });
    const tenant = uniqueTenant('mcp-batch');
    let base: string;
    let publisher: string;

    beforeAll(async () => {
      await ctx.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
      publisher = await token({ tenant, scopes: [PUBLISH] });
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: toolDocument({ name: 'track_shipment', description: 'Track a freight shipment.' }) })).statusCode).toBe(201);
    });

    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body });

    it('refuses a batch of 100 find_tools calls before any runs, and the rate limit still counts each call', async () => {
      const batchToken = await token({ tenant, sub: 'batcher' });
      const batch = Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'find_tools', arguments: { query: `track my shipment ${i}` } } }));
      const response = await post(JSON.stringify(batch), { authorization: `Bearer ${batchToken}` });
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 }, id: null });
      const logged = await call(ctx.app, 'GET', '/v1/discoveries?limit=200', { token: publisher });
      expect((logged.json() as { discoveries: { subject: string | null }[] }).discoveries.filter((d) => d.subject === 'batcher')).toHaveLength(0);

      // One message per request: the limit of 3 a minute (the batch spent one) stops the third call.
      const single = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'find_tools', arguments: { query: 'track my shipment' } } });
      const statuses = [];
      for (let i = 0; i < 3; i += 1) statuses.push((await post(single(i), { authorization: `Bearer ${batchToken}` })).status);
      expect(statuses).toEqual([200, 200, 429]);
    });

  });
});

describe('/.well-known/oauth-protected-resource with configured servers', () => {
  it('names PUBLIC_URL and the authorization servers (JWT_ISSUER by default)', async () => {
    const { buildTestApp } = await import('../helpers/app.js');
    const { clonePglite } = await import('../helpers/databases.js');
    const { fromPglite } = await import('../../src/db/client.js');
    const client = await clonePglite();
    const app = await buildTestApp({ database: fromPglite(client), env: { PUBLIC_URL: 'https://registry.internal/', JWT_ISSUER: 'https://login.internal/' } });
    try {
      const response = await app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource/mcp' });
      expect(response.json()).toEqual({ resource: 'https://registry.internal/mcp', authorization_servers: ['https://login.internal/'], bearer_methods_supported: ['header'], resource_name: 'Tool registry' });
      const denied = await app.inject({ method: 'POST', url: '/mcp', payload: {} });
      expect(denied.headers['www-authenticate']).toBe('Bearer resource_metadata="https://registry.internal/.well-known/oauth-protected-resource"');
    } finally {
      await app.close();
      await client.close();
    }
  });
});
