import type { FastifyRequest, preHandlerHookHandler } from 'fastify';

import { logWith } from '../telemetry/log-context.js';

/**
 * Context on a request's log lines: who called (tenant, and subject as the token gives it) and,
 * where a request is about one tool, its name. Never the token nor any argument value: only
 * names the service itself checks against its pattern (at most 64 characters) are copied.
 */

// A tool's name (src/tools/document.ts) is at most 64 characters; anything longer is not a name.
const TOOL_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

const nameOf = (value: unknown): string | undefined => (typeof value === 'string' && TOOL_NAME.test(value) ? value : undefined);
const field = (value: unknown, key: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined);

/** The MCP meta tools whose `name` argument names a registry tool. */
const MCP_NAMING_TOOLS = new Set(['describe_tool', 'call_tool']);

/** The tool fields of a request: `tool` for a route about one tool; for MCP, also the method and meta tool called. */
export function toolFields(request: FastifyRequest): Record<string, string> {
  const route = request.routeOptions.url ?? '';
  if (route.startsWith('/v1/tools/')) {
    const tool = nameOf(field(request.params, 'name'));
    return tool ? { tool } : {};
  }
  if (route === '/mcp') {
    const method = field(request.body, 'method');
    if (method !== 'tools/call') return typeof method === 'string' && method.length <= 64 ? { mcp_method: method } : {};
    const params = field(request.body, 'params');
    const mcpTool = nameOf(field(params, 'name'));
    const tool = mcpTool && MCP_NAMING_TOOLS.has(mcpTool) ? nameOf(field(field(params, 'arguments'), 'name')) : undefined;
    return { mcp_method: method, ...(mcpTool ? { mcp_tool: mcpTool } : {}), ...(tool ? { tool } : {}) };
  }
  // POST /v1/tools names the tool it publishes; authorize and call name the tool they check.
  const tool = nameOf(field(request.body, route === '/v1/tools' && request.method === 'POST' ? 'name' : 'tool'));
  return tool ? { tool } : {};
}

/** preHandler (the body is parsed by then): names the tool a request is about on its log lines. */
export const logToolName: preHandlerHookHandler = (request, reply, done) => {
  const fields = toolFields(request);
  if (Object.keys(fields).length > 0) logWith(request, reply, fields);
  done();
};
