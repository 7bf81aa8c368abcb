import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

import { errorResponses } from '../http/schemas.js';
import { ToolName } from '../tools/schemas.js';
import { rejectDuplicateKeys } from '../http/strict-json.js';
import type { AuthorizeInput, AuthorizeService } from './service.js';

const AuthorizeBody = Type.Object(
  {
    tool: ToolName,
    version: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'pin: deny unless this is the current version' })),
    arguments: Type.Record(Type.String(), Type.Unknown(), { description: 'the call\'s arguments, validated against the tool\'s parameters' }),
    discovery_id: Type.Optional(Type.String({ format: 'uuid', description: 'the discovery that offered the tool, if any' })),
  },
  { additionalProperties: false },
);

const Reason = Type.Object({
  code: Type.Enum(['unknown_tool', 'retired', 'version_mismatch', 'invalid_arguments', 'policy_denied']),
  message: Type.String(),
  pointer: Type.Optional(Type.String()),
});

const AuthorizeResponse = Type.Object({
  decision: Type.Enum(['allow', 'deny']),
  reasons: Type.Array(Reason),
  tool: Type.Object({ name: Type.String(), version: Type.Union([Type.String(), Type.Null()]) }),
});

/** POST /v1/authorize: the gateway's check before executing a tool call. */
export default async function authorizeRoutes(app: FastifyInstance, options: { authorize: AuthorizeService }): Promise<void> {
  // The gateway executes the arguments it sent with its own parser: they must mean to every parser
  // what they meant to the check (no duplicate keys, no number that JSON.parse rounds).
  rejectDuplicateKeys(app, { exactNumbers: true });
  app.post(
    '/v1/authorize',
    {
      schema: {
        summary: 'May this caller run this tool with these arguments? Re-checked against the stored tool',
        tags: ['authorize'],
        body: AuthorizeBody,
        response: { 200: AuthorizeResponse, ...errorResponses(400, 401, 413, 429) },
      },
    },
    async (request) => options.authorize.authorize(request.principal, request.body as AuthorizeInput),
  );
}
