import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { createMcpServer, type McpServices } from './server.js';

/** Headers set on the Fastify reply so far (CORS, rate limit, request id) carried onto the raw response. */
function carryHeaders(request: FastifyRequest, reply: FastifyReply): void {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[]);
  }
  reply.raw.setHeader('x-request-id', request.id);
}

const methodNotAllowed = {
  jsonrpc: '2.0',
  error: { code: -32000, message: 'Method not allowed: this endpoint is stateless, use POST' },
  id: null,
} as const;

/**
 * /mcp: the MCP streamable HTTP transport, stateless (a server and transport per request, no
 * session state to share between replicas). The same bearer-token hook as the API guards it, so a
 * request without a valid token gets the contract's 401 before MCP sees it.
 */
export default async function mcpRoutes(app: FastifyInstance, services: McpServices): Promise<void> {
  app.addHook('onRequest', app.authenticate);

  app.post('/mcp', { schema: { hide: true } }, async (request, reply) => {
    const server = createMcpServer(request.principal, services, request.log);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    carryHeaders(request, reply);
    reply.hijack();
    try {
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } catch (error) {
      request.log.error({ err: error }, 'MCP request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
      }
    }
  });

  // Stateless: no server-initiated stream (GET) and no session to end (DELETE).
  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      schema: { hide: true },
      handler: async (_request, reply) => reply.code(405).header('allow', 'POST').send(methodNotAllowed),
    });
  }
}
