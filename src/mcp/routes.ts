import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CancelledNotificationSchema, isJSONRPCNotification, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { bearerToken } from '../auth/plugin.js';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { sendError, toAppError } from '../http/error-handler.js';
import { McpCancellations } from './cancellations.js';
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
const JSON_RPC = { parseError: -32700, invalidRequest: -32600, internalError: -32603, serverError: -32000 } as const;

const rpcError = (code: number, message: string) => ({ jsonrpc: '2.0', error: { code, message }, id: null }) as const;

const methodNotAllowed = rpcError(JSON_RPC.serverError, 'Method not allowed: this endpoint is stateless, use POST');

/** A body that is not JSON at all: JSON-RPC's parse error, not an HTTP-level problem. */
function isParseError(error: FastifyError): boolean {
  return error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || error instanceof SyntaxError;
}

/**
 * /mcp: the MCP streamable HTTP transport, stateless (a server and transport per request, no
 * session state to share between replicas). The same bearer-token hook as the API guards it: a
 * request without a valid token gets the contract's 401 with an RFC 9728 `WWW-Authenticate`
 * challenge pointing at the protected-resource metadata. A body that is not JSON is JSON-RPC's
 * -32700 and a batch is -32600 (MCP removed batches), so one request is one call and the rate
 * limit counts every call; HTTP-level failures (429, 413, 415) keep the contract's error body.
 * A `notifications/cancelled` stops the request it names if that runs on this replica and came
 * with the same bearer token.
 */
export default async function mcpRoutes(app: FastifyInstance, services: McpServices & { oauth: Config['oauth'] }): Promise<void> {
  app.addHook('onRequest', app.authenticate);
  const cancellations = new McpCancellations();

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (isParseError(error)) return reply.code(400).send(rpcError(JSON_RPC.parseError, `Parse error: ${error.message}`));
    const appError = toAppError(error);
    if (appError.statusCode >= 500) request.log.error({ err: error }, 'MCP request failed');
    if (appError.code !== 'unauthorized') return sendError(request, reply, appError);
    const challenge = mcpChallenge(request, services.oauth, request.headers.authorization !== undefined);
    return sendError(request, reply, new AppError(appError.code, appError.message, appError.details, { ...appError.headers, 'www-authenticate': challenge }));
  });

  app.post('/mcp', { schema: { hide: true } }, async (request, reply) => {
    if (Array.isArray(request.body)) {
      return reply.code(400).send(rpcError(JSON_RPC.invalidRequest, 'JSON-RPC batches are not supported (the MCP specification removed them): send one message per request'));
    }
    const message = request.body;
    // The caller is its token (authenticated by now), however the header spells it.
    const caller = bearerToken(request);
    if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') {
      const cancelled = CancelledNotificationSchema.safeParse(message);
      if (cancelled.success && cancelled.data.params.requestId !== undefined) {
        cancellations.cancel(caller, cancelled.data.params.requestId, cancelled.data.params.reason ?? 'cancelled by the client');
      }
    }
    // Gone already (while the hooks ran): there is nobody to answer, and no close event will come.
    if (request.raw.socket.destroyed) return reply.hijack();
    const running = isJSONRPCRequest(message) ? cancellations.start(caller, message.id) : undefined;
    const server = createMcpServer(request.principal, services, request.log, { spendDiscovery: () => app.spendDiscovery(request), cancelled: running?.signal });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    const closed = new Promise<void>((resolve) =>
      reply.raw.once('close', () => {
        void transport.close();
        void server.close();
        resolve();
      }),
    );
    try {
      await server.connect(transport);
      carryHeaders(request, reply);
      reply.hijack();
      try {
        // A client that leaves before its answer closes the transport, and in JSON-response mode the
        // SDK's handleRequest then never settles: the connection's close ends this handler instead.
        await Promise.race([transport.handleRequest(request.raw, reply.raw, request.body), closed]);
      } catch (error) {
        request.log.error({ err: error }, 'MCP request failed');
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { 'content-type': 'application/json' });
          reply.raw.end(JSON.stringify(rpcError(JSON_RPC.internalError, 'Internal error')));
        }
      }
    } finally {
      running?.end();
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
