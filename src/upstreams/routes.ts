import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from 'typebox';

import { PUBLISH_SCOPE } from '../auth/principal.js';
import { AuthorizeResponse } from '../authorize/schemas.js';
import { errorResponses } from '../http/schemas.js';
import { rejectDuplicateKeys } from '../http/strict-json.js';
import { CallCancelled, CallDenied, type CallService } from './call.js';
import { CallBody, CallResponse, UpstreamBody, UpstreamList, UpstreamParams, UpstreamSynced, UpstreamView } from './schemas.js';
import type { UpstreamService } from './service.js';

/** /v1/upstreams (publishers manage their tenant's upstream MCP servers) and POST /v1/call. */
export default async function upstreamRoutes(scope: FastifyInstance, options: { upstreams: UpstreamService; calls: CallService }): Promise<void> {
  const { upstreams, calls } = options;
  // Arguments reach the upstream as parsed here: they must mean to every parser what they meant to the check.
  rejectDuplicateKeys(scope, { exactNumbers: true });
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const publish = app.requireScope(PUBLISH_SCOPE);
  const tags = ['upstreams'];

  app.post(
    '/v1/upstreams',
    {
      preHandler: publish,
      schema: {
        summary: 'Register an upstream MCP server (streamable HTTP); its tools become tools of the tenant, synced at once',
        tags,
        body: UpstreamBody,
        response: { 201: UpstreamSynced, ...errorResponses(400, 401, 403, 409, 413, 429) },
      },
    },
    async (request, reply) => reply.code(201).send(await upstreams.register(request.principal, request.body)),
  );

  app.get(
    '/v1/upstreams',
    { preHandler: publish, schema: { summary: "The tenant's upstream MCP servers", tags, response: { 200: UpstreamList, ...errorResponses(401, 403, 429) } } },
    async (request) => ({ upstreams: await upstreams.list(request.principal) }),
  );

  app.get(
    '/v1/upstreams/:name',
    { preHandler: publish, schema: { summary: 'One upstream MCP server (never its headers)', tags, params: UpstreamParams, response: { 200: UpstreamView, ...errorResponses(400, 401, 403, 404, 429) } } },
    async (request) => upstreams.get(request.principal, request.params.name),
  );

  app.post(
    '/v1/upstreams/:name/sync',
    {
      preHandler: publish,
      schema: { summary: 'Sync an upstream now: new tools added, changed ones versioned, vanished ones retired', tags, params: UpstreamParams, response: { 200: UpstreamSynced, ...errorResponses(400, 401, 403, 404, 429) } },
    },
    async (request) => upstreams.syncNow(request.principal, request.params.name),
  );

  app.delete(
    '/v1/upstreams/:name',
    { preHandler: publish, schema: { summary: 'Remove an upstream; its tools are retired', tags, params: UpstreamParams, response: { 204: Type.Null({ description: 'removed' }), ...errorResponses(400, 401, 403, 404, 429) } } },
    async (request, reply) => {
      await upstreams.remove(request.principal, request.params.name);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/call',
    {
      schema: {
        summary: "Call a tool through the registry: /v1/authorize's decision, then tools/call to the upstream serving it",
        tags: ['authorize'],
        body: CallBody,
        response: { 200: CallResponse, 403: AuthorizeResponse, ...errorResponses(400, 401, 404, 409, 413, 429, 502, 503) },
      },
    },
    async (request, reply) => {
      const callerLeft = new AbortController();
      const left = () => {
        if (!reply.raw.writableFinished) callerLeft.abort();
      };
      reply.raw.once('close', left);
      // Gone already (while the hooks ran): the close event will not come again.
      if (request.raw.socket.destroyed) callerLeft.abort();
      try {
        return { decision: 'allow' as const, result: await calls.call(request.principal, request.body, callerLeft.signal) };
      } catch (error) {
        if (error instanceof CallDenied) return reply.code(403).send(error.decision);
        if (error instanceof CallCancelled) {
          // Nobody is left to answer, and Fastify logs no completion for a closed connection.
          request.log.info({ statusCode: 499, tool: request.body.tool }, 'the caller went away: call cancelled upstream');
          return (reply as FastifyReply).code(499).send();
        }
        throw error;
      } finally {
        reply.raw.off('close', left);
      }
    },
  );
}
