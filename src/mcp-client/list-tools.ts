import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';

/** Pages of tools/list followed at most: a server that hands out new cursors forever is cut off. */
export const MAX_TOOL_PAGES = 1_000;

/**
 * Lists every tool of a connected MCP server, following `nextCursor` through every page. A server
 * that repeats a cursor, pages past MAX_TOOL_PAGES or lists more than `maxTools` tools is refused
 * with an error, rather than followed until memory or patience runs out.
 */
export async function listAllTools(client: Client, options?: RequestOptions, maxTools = Number.POSITIVE_INFINITY): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  const seen = new Set<string>();
  do {
    if (seen.size >= MAX_TOOL_PAGES) throw new Error(`MCP server listed more than ${MAX_TOOL_PAGES} pages of tools`);
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, options);
    tools.push(...page.tools);
    if (tools.length > maxTools) throw new Error(`MCP server lists more than ${maxTools} tools`);
    cursor = page.nextCursor;
    if (cursor !== undefined && seen.has(cursor)) throw new Error(`MCP server repeated cursor ${cursor}`);
    if (cursor !== undefined) seen.add(cursor);
  } while (cursor !== undefined);
  return tools;
}
