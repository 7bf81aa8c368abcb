import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyBaseLogger } from 'fastify';

import type { Principal } from '../auth/principal.js';
import type { DescribedTool } from '../discovery/schemas.js';
import type { DiscoveryService } from '../discovery/service.js';
import { AppError, toolNotFound } from '../errors.js';
import { toAppError } from '../http/error-handler.js';
import { mayUse } from '../tools/access.js';
import { renderForModel, strictOptionProblem } from '../tools/formats.js';
import type { ToolService } from '../tools/service.js';
import { documentOf, toCard } from '../tools/views.js';
import { CallCancelled, CallDenied, type CallService } from '../upstreams/call.js';
import { VERSION } from '../version.js';
import { renderDescription, renderShortlist } from './render.js';
import { CallToolInput, DescribeToolInput, DescribeToolOutput, FindToolsInput, FindToolsOutput } from './schemas.js';

export interface McpServices {
  discovery: DiscoveryService;
  tools: ToolService;
  /** Calls through the registry (upstream MCP servers); the same service as POST /v1/call. */
  calls: CallService;
}

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

/** What one /mcp request brings besides its caller. */
export interface McpRequestContext {
  /** Charges a find_tools call to the caller's discovery budget. */
  spendDiscovery?: () => Promise<void>;
  /** Aborts when the client cancels this request with notifications/cancelled (McpCancellations). */
  cancelled?: AbortSignal;
}

/**
 * An MCP server for one authenticated caller: `find_tools` (discovery), `describe_tool` (one
 * tool's full schema) and `call_tool` (a call through the registry). The first two follow the
 * caller's usage scopes, like /v1/discover: a publisher token does not widen what reaches a model,
 * and retired tools are never described. Each find_tools call is charged to the caller's discovery
 * budget (RATE_LIMIT_DISCOVER_PER_MINUTE).
 */
export function createMcpServer(principal: Principal, services: McpServices, log: FastifyBaseLogger, request: McpRequestContext = {}): McpServer {
  const { spendDiscovery = async () => undefined, cancelled } = request;
  const server = new McpServer(
    { name: 'tool-registry', version: VERSION },
    {
      instructions:
        'Call find_tools with the user request in their words to get the few tools that fit, with full schemas. ' +
        'Call describe_tool to fetch the full schema of a tool you already know by name. ' +
        'Call call_tool with a found tool\'s name and arguments to run it: the registry checks the call and forwards it to the server that serves the tool.',
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
    ({ query, top_k, format, strict, filters }) =>
      guarded(log, async () => {
        // One discovery budget per principal, shared with POST /v1/discover.
        await spendDiscovery();
        // The discovery service checks the request (query and filters), as for POST /v1/discover.
        const result = await services.discovery.discover(principal, { query, top_k, format, mode: 'hybrid', ...(strict === undefined ? {} : { strict }), ...(filters ? { filters } : {}) });
        return {
          structuredContent: result,
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
      outputSchema: DescribeToolOutput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    ({ name, format, strict }) =>
      guarded(log, async () => {
        const problem = strictOptionProblem(format, strict);
        if (problem) throw new AppError('validation_failed', `strict ${problem}`, [{ pointer: '/strict', message: problem }]);
        const row = await services.tools.get(principal, name);
        // GET /v1/tools shows publishers their whole tenant; a model only sees what the caller may run.
        if (!mayUse(principal, row)) throw toolNotFound(name);
        const { schema, strictFallback } = renderForModel(documentOf(row), format, strict);
        const described: DescribedTool = { name: row.name, version: row.version, card: toCard(row), schema, ...(strictFallback === undefined ? {} : { strict_fallback: strictFallback }) };
        return {
          structuredContent: described,
          content: [{ type: 'text', text: renderDescription(described) }],
        };
      }),
  );

  server.registerTool(
    'call_tool',
    {
      title: 'Call a tool',
      description:
        'Run a tool that find_tools returned, with arguments that fit its schema. The registry checks the call as POST /v1/authorize does ' +
        '(scopes, status, arguments, policy) and forwards it to the MCP server that serves the tool; the result is that server\'s. ' +
        'A refused call is an error result with the reasons; unknown tools and tools you may not use are reported alike: not found.',
      inputSchema: CallToolInput,
      annotations: { readOnlyHint: false, openWorldHint: true },
    },
    ({ name, arguments: args }, { signal }) =>
      guarded(log, async () => {
        try {
          // `signal` aborts when the client's connection closes, `cancelled` when it cancels the request.
          return await services.calls.call(principal, { tool: name, arguments: args ?? {} }, cancelled ? AbortSignal.any([signal, cancelled]) : signal);
        } catch (error) {
          // Closed connection: the SDK sends nothing. Cancelled by notification: the result ends the
          // HTTP exchange the client still holds open, and the client, whose request is settled, ignores it.
          if (error instanceof CallCancelled) return errorResult(error.message);
          if (!(error instanceof CallDenied)) throw error;
          const reasons = error.decision.reasons.map((r) => `- ${r.code}${r.pointer ? ` at ${r.pointer}` : ''}: ${r.message}`);
          return { ...errorResult([`call to '${name}' denied:`, ...reasons].join('\n')), structuredContent: error.decision };
        }
      }),
  );

  // Stateless HTTP (a server per request, no stream to the client): a list-changed notification
  // could never be delivered, so it is not advertised.
  server.server.registerCapabilities({ tools: { listChanged: false } });
  return server;
}
