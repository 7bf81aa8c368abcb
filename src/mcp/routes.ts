import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import type { Config } from '../config.js';
import { statusOf } from '../errors.js';
import { toAppError } from '../http/error-handler.js';
import { mcpChallenge } from './resource-metadata.js';
import { createMcpServer, type McpServices } from './server.js';

/** Headers set on the Fastify reply so far (CORS, rate limit, request id) carried onto the raw response. */
function carryHeaders(request: FastifyRequest, reply: FastifyReply): void {
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) reply.raw.setHeader(name, value as string | number | string[]);
  }
  reply.raw.setHeader('x-request-id', request.id);
}

/** JSON-RPC 2.0 error codes /mcp answers with. */
export const JSON_RPC = { parseError: -32700, invalidRequest: -32600, internalError: -32603, serverError: -32000 } as const;

const rpcError = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id: null }) as const;

const methodNotAllowed = rpcError(JSON_RPC.serverError, 'Method not allowed: this endpoint is stateless, use POST');

/** Which JSON-RPC error a failure before the MCP handler becomes (body parsing, limits, rate limits). */
function rpcCodeOf(error: FastifyError, status: number): number {
  if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || error instanceof SyntaxError) return JSON_RPC.parseError;
  if (status >= 500) return JSON_RPC.internalError;
  return status === 400 || status === 413 || status === 415 ? JSON_RPC.invalidRequest : JSON_RPC.serverError;
}

/**
 * /mcp: the MCP streamable HTTP transport, stateless (a server and transport per request, no
 * session state to share between replicas). The same bearer-token hook as the API guards it: a
 * request without a valid token gets the contract's 401 with an RFC 9728 `WWW-Authenticate`
 * challenge pointing at the protected-resource metadata. Every other failure is a JSON-RPC error
 * (-32700 for malformed JSON); batches are refused (MCP removed them), so one request is one call
 * and the rate limit counts every call.
 */
export default async function mcpRoutes(app: FastifyInstance, services: McpServices & { oauth: Config['oauth'] }): Promise<void> {
  app.addHook('onRequest', app.authenticate);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const appError = toAppError(error);
    const status = statusOf[appError.code];
    if (status >= 500) request.log.error({ err: error }, 'MCP request failed');
    if (appError.code === 'unauthorized') {
      const challenge = mcpChallenge(request, services.oauth, request.headers.authorization !== undefined);
      return reply.code(401).headers({ ...appError.headers, 'www-authenticate': challenge })
        .send({ error: { code: appError.code, message: appError.message, details: appError.details, request_id: String(request.id) } });
    }
    return reply.code(status).headers(appError.headers).send(rpcError(rpcCodeOf(error, status), status >= 500 ? 'Internal error' : appError.message));
  });

  app.post('/mcp', { schema: { hide: true } }, async (request, reply) => {
    if (Array.isArray(request.body)) {
      return reply.code(400).send(rpcError(JSON_RPC.invalidRequest, 'JSON-RPC batches are not supported (the MCP specification removed them): send one message per request'));
    }
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
        reply.raw.end(JSON.stringify(rpcError(JSON_RPC.internalError, 'Internal error')));
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
