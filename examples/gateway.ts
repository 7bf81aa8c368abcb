/**
 * An MCP client connected only to the registry, which finds a tool and calls it through the
 * gateway: no connection to the tool's own server, and only tools the caller may use are offered.
 *
 *   MCP client --find_tools--> registry (/mcp) --(shortlist)
 *   MCP client --call_tool---> registry: authorize decision --tools/call--> upstream MCP server
 *
 * Run it against a service with an upstream registered (docs/gateway.md), e.g. the reference
 * server `npx mcp-server-everything streamableHttp` on port 3001 and
 *   UPSTREAM_ALLOWED_URLS=http://127.0.0.1:3001/ npm start
 *   curl -X POST localhost:8080/v1/upstreams -H "Authorization: Bearer $PUBLISHER" -H 'content-type: application/json' \
 *     -d '{"name": "everything", "url": "http://127.0.0.1:3001/mcp"}'
 * then
 *   REGISTRY_URL=http://localhost:8080 REGISTRY_TOKEN=$(npm run -s token -- --tenant acme) npx tsx examples/gateway.ts
 */
import { pathToFileURL } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** What one request did: the shortlist, the tool called and its result. */
export interface GatewayTurn {
  shortlist: string[];
  called: string | undefined;
  result: CallToolResult | undefined;
}

/** Finds the tools for `request` and calls the best one with `args`, over /mcp only. */
export async function findAndCall(registryUrl: string, token: string, request: string, args: Record<string, unknown>): Promise<GatewayTurn> {
  const client = new Client({ name: 'gateway-example', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', registryUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  try {
    const found = (await client.callTool({ name: 'find_tools', arguments: { query: request, top_k: 3 } })) as CallToolResult;
    const shortlist = ((found.structuredContent as { tools?: { name: string }[] } | undefined)?.tools ?? []).map((t) => t.name);
    const best = shortlist[0];
    if (best === undefined) return { shortlist, called: undefined, result: undefined };
    // A model would fill the arguments from the tool's schema; the example is given them.
    const result = (await client.callTool({ name: 'call_tool', arguments: { name: best, arguments: args } })) as CallToolResult;
    return { shortlist, called: best, result };
  } finally {
    await client.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const url = process.env.REGISTRY_URL ?? 'http://localhost:8080';
  const token = process.env.REGISTRY_TOKEN;
  if (!token) throw new Error('set REGISTRY_TOKEN (npm run -s token -- --tenant acme)');
  const turn = await findAndCall(url, token, 'add the numbers 17 and 25', { a: 17, b: 25 });
  process.stdout.write(`${JSON.stringify(turn, null, 2)}\n`);
}
