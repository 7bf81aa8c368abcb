import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';
import * as z from 'zod';

import { holdsAll, type Principal } from '../auth/principal.js';
import { SEARCHED_PARTS } from '../discovery/query.js';
import type { DiscoveryService } from '../discovery/service.js';
import { AppError, toolNotFound } from '../errors.js';
import { toAppError } from '../http/error-handler.js';
import { FORMATS } from '../tools/formats.js';
import { renderTool } from '../tools/formats.js';
import type { ToolService } from '../tools/service.js';
import { documentOf, toCard } from '../tools/views.js';
import { VERSION } from '../version.js';
import { type DescribedTool, renderDescription, renderShortlist } from './render.js';

export interface McpServices {
  discovery: DiscoveryService;
  tools: ToolService;
}

const Format = z.enum(FORMATS).default('mcp').describe('tool-definition format of the returned schemas');

const DescribedShape = {
  name: z.string(),
  version: z.string(),
  card: z.record(z.string(), z.unknown()).describe('the light card: summary, not_for, aliases, tags, scopes, token cost'),
  schema: z.record(z.string(), z.unknown()).describe('the full schema in the requested format'),
};

const FindToolsInput = {
  query: z.string().min(1).max(4000).describe("the user's request, in their words"),
  top_k: z.number().int().min(1).max(10).default(3).describe('how many tools to return, best first'),
  format: Format,
  filters: z
    .object({
      category: z.string().min(1).max(64).optional(),
      tags: z.array(z.string().min(1).max(64)).max(32).optional().describe('a tool matches when it has any of them'),
    })
    .strict()
    .optional(),
};

const FindToolsOutput = {
  discovery_id: z.string(),
  tools: z.array(z.object({ ...DescribedShape, score: z.number() })),
  tokens: z.object({ shortlist: z.number().int(), catalog: z.number().int() }),
  low_confidence: z.boolean(),
  search_mode: z.enum(['hybrid', 'lexical', 'vector']),
  searched_query: z.object({ bounded: z.boolean(), part: z.enum(SEARCHED_PARTS), chars: z.number().int(), total_chars: z.number().int() }),
};

const DescribeToolInput = {
  name: z.string().min(1).max(64).describe('the tool name, as find_tools returned it'),
  format: Format,
};

/** A tool-level error result: the model sees the message, the protocol call succeeds. */
function errorResult(message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] };
}

/** Runs a tool body; caller-safe errors become error results, internals are logged and hidden. */
async function guarded(log: FastifyBaseLogger, body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (error) {
    const appError = toAppError(error as Error);
    if (appError.statusCode >= 500) log.error({ err: error }, 'MCP tool call failed');
    return errorResult(appError.message);
  }
}

/**
 * An MCP server for one authenticated caller: `find_tools` (discovery) and `describe_tool` (one
 * tool's full schema). Both follow the caller's usage scopes, like /v1/discover: a publisher token
 * does not widen what reaches a model, and retired tools are never described.
 */
export function createMcpServer(principal: Principal, services: McpServices, log: FastifyBaseLogger): McpServer {
  const server = new McpServer(
    { name: 'tool-registry', version: VERSION },
    {
      instructions:
        'Call find_tools with the user request in their words to get the few tools that fit, with full schemas. ' +
        'Call describe_tool to fetch the full schema of a tool you already know by name.',
    },
  );

  server.registerTool(
    'find_tools',
    {
      title: 'Find tools',
      description: 'Search the tool registry: the few tools that best serve a request, best first, each with its card and full schema.',
      inputSchema: FindToolsInput,
      outputSchema: FindToolsOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ query, top_k, format, filters }) =>
      guarded(log, async () => {
        if (query.trim() === '') throw new AppError('validation_failed', 'query must contain some text');
        const result = await services.discovery.discover(principal, { query, top_k, format, ...(filters ? { filters } : {}) });
        return {
          structuredContent: result as unknown as Record<string, unknown>,
          content: [{ type: 'text', text: renderShortlist(query, result) }],
        };
      }),
  );

  server.registerTool(
    'describe_tool',
    {
      title: 'Describe a tool',
      description: 'The full schema of one tool by name. Unknown tools and tools you may not use are reported alike: not found.',
      inputSchema: DescribeToolInput,
      outputSchema: DescribedShape,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ name, format }) =>
      guarded(log, async () => {
        const row = await services.tools.get(principal, name);
        // GET /v1/tools shows publishers their whole tenant; a model only sees what the caller may run.
        if (row.status !== 'active' || !holdsAll(principal, row.requiredScopes)) throw toolNotFound(name);
        const described: DescribedTool = { name: row.name, version: row.version, card: toCard(row), schema: renderTool(documentOf(row), format) };
        return {
          structuredContent: described as unknown as Record<string, unknown>,
          content: [{ type: 'text', text: renderDescription(described) }],
        };
      }),
  );

  // Stateless HTTP (a server per request, no stream to the client): a list-changed notification
  // could never be delivered, so it is not advertised.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  return server;
}
