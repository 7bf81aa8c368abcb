import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/** Lists every tool of a connected MCP server, following `nextCursor` through every page. */
export async function listAllTools(client: Client, options?: RequestOptions): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  const seen = new Set<string>();
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, options);
    tools.push(...page.tools);
    cursor = page.nextCursor;
    if (cursor !== undefined && seen.has(cursor)) throw new Error(`MCP server repeated cursor ${cursor}`);
    if (cursor !== undefined) seen.add(cursor);
  } while (cursor !== undefined);
  return tools;
}
