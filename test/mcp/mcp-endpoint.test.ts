import type { AddressInfo } from 'node:net';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type DiscoverResponse, useDiscoveryApp } from '../discovery/helpers.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

/**
 * /mcp through the SDK's own client over real HTTP (the app listens on 127.0.0.1:0), on every
 * database leg: the MCP tools must return what the HTTP API returns, and never more.
 */
const tool = (name: string, description: string, extra: Record<string, unknown> = {}) =>
  toolDocument({ name, description, summary: undefined, aliases: [], examples: [], tags: [], category: undefined, not_for: undefined, ...extra });

interface Shortlist {
  discovery_id: string;
  tools: { name: string; version: string; score: number; card: Record<string, unknown>; schema: Record<string, unknown> }[];
  tokens: { shortlist: number; catalog: number };
  low_confidence: boolean;
  search_mode: string;
}

forEachDatabase((db) => {
  describe('/mcp (streamable HTTP, MCP SDK client)', () => {
    const ctx = useDiscoveryApp(db, () => new HashingEmbedder());
    const tenant = uniqueTenant('mcp');
    let url: URL;
    let publisher: string;
    let reader: string;
    const clients: Client[] = [];

    beforeAll(async () => {
      await ctx.app.listen({ host: '127.0.0.1', port: 0 });
      url = new URL(`http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}/mcp`);
      // The publisher holds billing:read but not billing:admin; the reader holds support:read only.
      publisher = await token({ tenant, scopes: [PUBLISH, 'billing:read'] });
      reader = await token({ tenant, scopes: ['support:read'] });
      const docs = [
        tool('issue_refund', 'Refund a paid invoice in full or in part.', { required_scopes: ['billing:read'], category: 'billing', tags: ['billing'] }),
        tool('void_invoice', 'Void an invoice and refund every payment on it.', { required_scopes: ['billing:admin'], sensitivity: 'high', category: 'billing' }),
        tool('track_shipment', 'Track a freight shipment and report its location and delivery estimate.', { category: 'logistics' }),
        tool('search_tickets', 'Search support tickets by customer or status.', { required_scopes: ['support:read'], category: 'support' }),
        tool('retired_refund', 'Refund an invoice the old way.'),
      ];
      for (const doc of docs) expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
      expect((await call(ctx.app, 'DELETE', '/v1/tools/retired_refund', { token: publisher })).statusCode).toBe(200);
      await ctx.flush();
    });

    afterAll(async () => {
      for (const client of clients) await client.close();
    });

    const connect = async (tokenValue: string): Promise<Client> => {
      const client = new Client({ name: 'registry-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${tokenValue}` } } }));
      clients.push(client);
      return client;
    };

    const findTools = async (client: Client, args: Record<string, unknown>) => {
      const result = (await client.callTool({ name: 'find_tools', arguments: args })) as CallToolResult;
      expect(result.isError ?? false).toBe(false);
      return { structured: result.structuredContent as unknown as Shortlist, text: (result.content[0] as { text: string }).text };
    };

    const describeTool = async (client: Client, name: string, format?: string) =>
      (await client.callTool({ name: 'describe_tool', arguments: { name, ...(format ? { format } : {}) } })) as CallToolResult;

    it('offers find_tools, describe_tool and call_tool with input schemas (output schemas for the first two)', async () => {
      const client = await connect(reader);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(['call_tool', 'describe_tool', 'find_tools']);
      const find = tools.find((t) => t.name === 'find_tools')!;
      expect(find.inputSchema.required).toEqual(['query']);
      expect(Object.keys(find.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['query', 'top_k', 'format', 'filters']));
      expect(find.outputSchema).toBeDefined();
      expect(find.annotations?.readOnlyHint).toBe(true);
    });

    it('find_tools returns the same shortlist as POST /v1/discover, structured and as text', async () => {
      const client = await connect(publisher);
      const args = { query: 'refund the invoice', top_k: 3, format: 'anthropic' };
      const { structured, text } = await findTools(client, args);
      const http = (await call(ctx.app, 'POST', '/v1/discover', { token: publisher, body: args })).json<DiscoverResponse>();
      expect(structured.tools.length).toBeGreaterThan(0);
      expect(structured.tools[0]!.name).toBe('issue_refund');
      const { discovery_id: mcpId, ...mcpRest } = structured;
      const { discovery_id: httpId, ...httpRest } = http;
      expect(mcpRest).toEqual(httpRest);
      expect(mcpId).not.toBe(httpId);
      expect(structured.tools[0]!.schema).toMatchObject({ name: 'issue_refund', input_schema: { type: 'object' } });
      expect(text).toContain('1. issue_refund v1.0.0');
      expect(text).toContain('"input_schema"');
    });

    it('find_tools renders MCP tool definitions by default', async () => {
      const client = await connect(publisher);
      const { structured } = await findTools(client, { query: 'refund the invoice' });
      expect(structured.tools[0]!.schema).toMatchObject({ name: 'issue_refund', inputSchema: { type: 'object' } });
      expect(structured.tools.length).toBeLessThanOrEqual(3);
    });

    it('find_tools never returns a tool whose scopes the caller lacks, nor a retired one', async () => {
      const readerNames = (await findTools(await connect(reader), { query: 'refund invoice shipment tickets', top_k: 10 })).structured.tools.map((t) => t.name);
      expect(readerNames).toContain('search_tickets');
      expect(readerNames).not.toContain('issue_refund');
      expect(readerNames).not.toContain('void_invoice');
      expect(readerNames).not.toContain('retired_refund');
      // registry:publish does not widen discovery: void_invoice needs billing:admin.
      const publisherNames = (await findTools(await connect(publisher), { query: 'void invoice refund', top_k: 10 })).structured.tools.map((t) => t.name);
      expect(publisherNames).toContain('issue_refund');
      expect(publisherNames).not.toContain('void_invoice');
      expect(publisherNames).not.toContain('retired_refund');
    });

    it('find_tools shows nothing of another tenant', async () => {
      const stranger = await token({ tenant: uniqueTenant('other'), scopes: [PUBLISH, 'billing:read', 'billing:admin', 'support:read'] });
      const { structured, text } = await findTools(await connect(stranger), { query: 'refund invoice', top_k: 10 });
      expect(structured.tools).toEqual([]);
      expect(structured.tokens).toEqual({ shortlist: 0, catalog: 0 });
      expect(text).toMatch(/^No tool matches/);
    });

    it('find_tools rejects invalid arguments as a tool error', async () => {
      const client = await connect(reader);
      const tooMany = (await client.callTool({ name: 'find_tools', arguments: { query: 'tickets', top_k: 11 } })) as CallToolResult;
      expect(tooMany.isError).toBe(true);
      const blank = (await client.callTool({ name: 'find_tools', arguments: { query: '   ' } })) as CallToolResult;
      expect(blank.isError).toBe(true);
      expect((blank.content[0] as { text: string }).text).toMatch(/some text/);
      const control = (await client.callTool({ name: 'find_tools', arguments: { query: 'tickets\u0000' } })) as CallToolResult;
      expect(control.isError).toBe(true);
      expect((control.content[0] as { text: string }).text).toBe('query must not contain control characters or unpaired surrogates');
      const unknown = (await client.callTool({ name: 'find_tools', arguments: { query: 'tickets', mode: 'vector' } })) as CallToolResult;
      expect(unknown.isError).toBe(true);
    });

    it('find_tools takes the fields of POST /v1/discover: a long request is searched by its bounded part', async () => {
      const client = await connect(reader);
      const long = `${'We discussed many unrelated things earlier in this conversation. '.repeat(80)} Now search the support tickets of this customer.`;
      const { structured } = await findTools(client, { query: long });
      expect(structured.tools[0]!.name).toBe('search_tickets');
      expect((structured as Shortlist & { searched_query: { bounded: boolean; part: string } }).searched_query).toMatchObject({ bounded: true, part: 'head_and_tail' });
    });

    it('describe_tool returns the full schema in the requested format', async () => {
      const client = await connect(publisher);
      const result = await describeTool(client, 'issue_refund', 'openai');
      expect(result.isError ?? false).toBe(false);
      expect(result.structuredContent).toMatchObject({
        name: 'issue_refund',
        version: '1.0.0',
        card: { name: 'issue_refund', required_scopes: ['billing:read'] },
        schema: { type: 'function', function: { name: 'issue_refund', parameters: { required: ['invoice_id'] } } },
      });
      expect((result.content[0] as { text: string }).text).toContain('issue_refund v1.0.0');
    });

    it('describe_tool and find_tools give the strict rendering on strict: true, and refuse it beside another format', async () => {
      const client = await connect(publisher);
      const described = (await client.callTool({ name: 'describe_tool', arguments: { name: 'issue_refund', format: 'openai', strict: true } })) as CallToolResult;
      expect(described.isError ?? false).toBe(false);
      expect(described.structuredContent).toMatchObject({ schema: { type: 'function', function: { name: 'issue_refund', strict: true, parameters: { additionalProperties: false } } } });
      const found = await findTools(client, { query: 'issue_refund', format: 'openai-responses', strict: true, top_k: 1 });
      expect(found.structured.tools[0]!.schema).toMatchObject({ name: 'issue_refund', strict: true, parameters: { additionalProperties: false } });
      const refused = (await client.callTool({ name: 'describe_tool', arguments: { name: 'issue_refund', format: 'mcp', strict: true } })) as CallToolResult;
      expect(refused.isError).toBe(true);
      expect((refused.content[0] as { text: string }).text).toMatch(/strict applies to the formats openai and openai-responses only/);
    });

    it('describe_tool answers unknown, out-of-scope, retired and foreign tools alike: not found', async () => {
      const stranger = await token({ tenant: uniqueTenant('other'), scopes: ['billing:read'] });
      const cases: [string, string][] = [
        [reader, 'no_such_tool'],
        [reader, 'issue_refund'], // needs billing:read
        [publisher, 'void_invoice'], // a publisher may GET it, but may not use it: never shown to a model
        [publisher, 'retired_refund'],
        [stranger, 'issue_refund'], // other tenant
      ];
      for (const [tokenValue, name] of cases) {
        const result = await describeTool(await connect(tokenValue), name);
        expect(result.isError, name).toBe(true);
        expect(result.structuredContent).toBeUndefined();
        expect(result.content).toEqual([{ type: 'text', text: `tool '${name}' not found` }]);
      }
    });

    it('refuses what REST refuses, through the same service checks: call_tool as POST /v1/authorize, find_tools as POST /v1/discover, describe_tool as GET /v1/tools/{name}', async () => {
      const client = await connect(publisher);
      const mcpText = async (name: string, args: Record<string, unknown>) => {
        const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
        expect(result.isError, name).toBe(true);
        return (result.content[0] as { text: string }).text;
      };
      const restDetails = async (method: 'GET' | 'POST', path: string, body?: Record<string, unknown>) => {
        const response = await call(ctx.app, method, path, { token: publisher, ...(body ? { body } : {}) });
        expect(response.statusCode, path).toBe(400);
        return response.json<{ error: { code: string; details: { pointer: string; message: string }[] } }>().error;
      };
      const named = (details: { pointer: string; message: string }[]) => details.map((d) => `${d.pointer.slice(1)} ${d.message}`).join('; ');

      // A name no tool can have: before, call_tool answered "not found" and REST a 400.
      const badName = await restDetails('POST', '/v1/authorize', { tool: 'bad name!', arguments: {} });
      expect(badName.details).toEqual([expect.objectContaining({ pointer: '/tool' })]);
      expect(await mcpText('call_tool', { name: 'bad name!', arguments: {} })).toBe(named(badName.details));

      // An argument no two parsers read alike.
      const surrogate = await restDetails('POST', '/v1/authorize', { tool: 'issue_refund', arguments: { note: 'a\ud800' } });
      expect(surrogate.details).toEqual([expect.objectContaining({ pointer: '/arguments/note' })]);
      expect(await mcpText('call_tool', { name: 'issue_refund', arguments: { note: 'a\ud800' } })).toBe(named(surrogate.details));

      // A filter PostgreSQL cannot store (the discovery log keeps it): find_tools as POST /v1/discover.
      const badFilter = await restDetails('POST', '/v1/discover', { query: 'refund', filters: { tags: ['a\ud800'] } });
      expect(badFilter.details).toEqual([expect.objectContaining({ pointer: '/filters/tags/0' })]);
      expect(await mcpText('find_tools', { query: 'refund', filters: { tags: ['a\ud800'] } })).toBe(named(badFilter.details));

      const badPath = await restDetails('GET', `/v1/tools/${encodeURIComponent('bad name!')}`);
      expect(badPath.details).toEqual([expect.objectContaining({ pointer: '/name' })]);
      expect(await mcpText('describe_tool', { name: 'bad name!' })).toBe(named(badPath.details));
    });

    it('refuses requests without a valid bearer token with the contract\'s 401', async () => {
      const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
      const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
      for (const authorization of [undefined, 'Bearer not.a.jwt', `Bearer ${await token({ tenant, exp: Math.floor(Date.now() / 1000) - 3600 })}`]) {
        const response = await fetch(url, { method: 'POST', headers: { ...headers, ...(authorization ? { authorization } : {}) }, body: JSON.stringify(initialize) });
        expect(response.status).toBe(401);
        expect(response.headers.get('www-authenticate') ?? 'Bearer').toMatch(/^Bearer/);
        expect(((await response.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
      }
      const client = new Client({ name: 'anonymous', version: '1.0.0' });
      await expect(client.connect(new StreamableHTTPClientTransport(url))).rejects.toThrow(/401|nauthorized/);
    });

    it('answers GET and DELETE with 405 (stateless endpoint)', async () => {
      for (const method of ['GET', 'DELETE']) {
        const response = await fetch(url, { method, headers: { authorization: `Bearer ${reader}`, accept: 'text/event-stream' } });
        expect(response.status).toBe(405);
        expect(response.headers.get('allow')).toBe('POST');
      }
    });
  });
});
