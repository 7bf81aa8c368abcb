import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CreateMessageRequestSchema, ElicitRequestSchema, ErrorCode, ListRootsRequestSchema, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';

import { listAllTools } from '../mcp-client/list-tools.js';
import { VERSION } from '../version.js';

// The mapping moved below the CLI so the gateway (src/upstreams) shares it; re-exported for the CLI's callers.
export { mapMcpTool, type MappedTool, type MappingOptions, registryName, repairSchema } from '../mcp-client/mapping.js';

/** Where the MCP server is: a command to spawn (stdio) or a streamable HTTP endpoint. */
export type McpSource =
  | { kind: 'stdio'; command: string; env?: Record<string, string>; cwd?: string }
  | { kind: 'http'; url: string; headers?: Record<string, string> };

/** Splits a command line into words, honouring single and double quotes and backslashes. */
export function splitCommand(line: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) word += line[++i];
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unterminated ${quote} in command: ${line}`);
  if (inWord) words.push(word);
  return words;
}

function transportFor(source: McpSource): Transport {
  if (source.kind === 'http') return new StreamableHTTPClientTransport(new URL(source.url), { requestInit: { headers: source.headers ?? {} } });
  const [command, ...args] = splitCommand(source.command);
  if (!command) throw new Error('--command is empty');
  return new StdioClientTransport({ command, args, env: { ...getDefaultEnvironment(), ...source.env }, cwd: source.cwd, stderr: 'pipe' });
}

/**
 * An MCP client declaring the capabilities servers look for (roots, sampling, elicitation): some
 * servers list tools only to clients that have them. It answers their requests as a client
 * without a user or a model would: no roots, sampling refused, elicitation declined.
 */
function importClient(): Client {
  const client = new Client({ name: 'tool-registry-import', version: VERSION }, { capabilities: { roots: { listChanged: false }, sampling: {}, elicitation: {} } });
  client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [] }));
  client.setRequestHandler(CreateMessageRequestSchema, () => {
    throw new McpError(ErrorCode.InvalidRequest, 'tool-registry import-mcp only lists tools: it has no model to sample');
  });
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'decline' as const }));
  return client;
}

/** Connects to an MCP server and lists all its tools, following `nextCursor` through every page. */
export async function listMcpTools(source: McpSource): Promise<{ server: { name: string; version: string } | undefined; tools: Tool[] }> {
  const client = importClient();
  await client.connect(transportFor(source));
  try {
    return { server: client.getServerVersion(), tools: await listAllTools(client) };
  } finally {
    await client.close();
  }
}
