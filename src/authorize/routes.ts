import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';

import { errorResponses } from '../http/schemas.js';
import { rejectDuplicateKeys } from '../http/strict-json.js';
import { AuthorizeBody, AuthorizeResponse } from './schemas.js';
import type { AuthorizeService } from './service.js';

/** POST /v1/authorize: the gateway's check before executing a tool call. */
export default async function authorizeRoutes(app: FastifyInstance, options: { authorize: AuthorizeService }): Promise<void> {
  // The gateway executes the arguments it sent with its own parser: they must mean to every parser
  // what they meant to the check (no duplicate keys, no number that JSON.parse rounds).
  rejectDuplicateKeys(app, { exactNumbers: true });
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/v1/authorize',
    {
      schema: {
        summary: 'May this caller run this tool with these arguments? Re-checked against the stored tool',
        tags: ['authorize'],
        body: AuthorizeBody,
        response: { 200: AuthorizeResponse, ...errorResponses(400, 401, 413, 429) },
      },
    },
    async (request) => options.authorize.authorize(request.principal, request.body),
  );
}
