import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

import { PUBLISH_SCOPE } from '../auth/principal.js';
import { AppError } from '../errors.js';
import { errorResponses } from '../http/schemas.js';
import { FORMATS } from '../tools/formats.js';
import { ToolCard } from '../tools/schemas.js';
import { textProblems } from '../tools/validation.js';
import type { DiscoveryReport } from './log-report.js';
import { SEARCHED_QUERY_CHARS } from './query.js';
import type { DiscoveryService } from './service.js';

const DiscoverBody = Type.Object(
  {
    query: Type.String({
      minLength: 1,
      description: `the user's request, in their words; any length up to the body limit (a longer one is searched by its bounded part of ${SEARCHED_QUERY_CHARS} characters, see searched_query)`,
    }),
    top_k: Type.Integer({ minimum: 1, maximum: 10, default: 3 }),
    format: Type.Enum([...FORMATS], { default: 'openai' }),
    mode: Type.Enum(['hybrid', 'lexical', 'vector'], {
      default: 'hybrid',
      description: 'retrieval legs to rank with (extension; hybrid is what agents should use)',
    }),
    filters: Type.Optional(
      Type.Object(
        {
          category: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32, description: 'a tool matches when it has any of them' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

const DiscoverResponse = Type.Object({
  discovery_id: Type.String({ format: 'uuid' }),
  tools: Type.Array(
    Type.Object({
      name: Type.String(),
      version: Type.String(),
      score: Type.Number(),
      card: ToolCard,
      schema: Type.Record(Type.String(), Type.Unknown(), { description: 'the full schema in the requested format' }),
    }),
  ),
  tokens: Type.Object({
    shortlist: Type.Integer({ description: 'prompt tokens this shortlist adds' }),
    catalog: Type.Integer({ description: 'prompt tokens of every tool the caller may use, in this format' }),
  }),
  low_confidence: Type.Boolean(),
  search_mode: Type.Enum(['hybrid', 'lexical', 'vector'], { description: 'the legs that ranked: lexical when the embedder is disabled or unavailable' }),
  searched_query: Type.Object(
    {
      bounded: Type.Boolean({ description: 'true when the search used only part of the request' }),
      part: Type.Enum(['whole', 'last_user_turn', 'head_and_tail'], {
        description: 'whole; the last user turn of a pasted conversation; or the head and tail of any other long text',
      }),
      chars: Type.Integer({ description: 'characters searched (whitespace collapsed)' }),
      total_chars: Type.Integer({ description: 'characters of the whole request (whitespace collapsed)' }),
    },
    { description: `what the search used of the request (extension): at most ${SEARCHED_QUERY_CHARS} characters` },
  ),
});

/** POST /v1/discover and the publishers' discovery report. */
export default async function discoveryRoutes(scope: FastifyInstance, options: { discovery: DiscoveryService; report: DiscoveryReport }): Promise<void> {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  app.post(
    '/v1/discover',
    {
      schema: {
        summary: 'The few tools that best serve a request, with full schemas for those only',
        tags: ['discovery'],
        body: DiscoverBody,
        response: { 200: DiscoverResponse, ...errorResponses(400, 401, 413, 429) },
      },
    },
    async (request) => {
      const body = request.body;
      if (body.query.trim() === '') {
        throw new AppError('validation_failed', 'request body is invalid', [{ pointer: '/query', message: 'must contain some text', in: 'body' }]);
      }
      if (textProblems(body.query).length > 0) {
        throw new AppError('validation_failed', 'request body is invalid', [{ pointer: '/query', message: 'must not contain control characters or unpaired surrogates', in: 'body' }]);
      }
      return options.discovery.discover(request.principal, body);
    },
  );

  app.get(
    '/v1/discoveries',
    {
      onRequest: app.requireScope(PUBLISH_SCOPE),
      schema: {
        summary: 'Recent discoveries of the tenant (publishers): find queries that matched poorly',
        tags: ['discovery'],
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
          before: Type.Optional(Type.String({ format: 'date-time', description: 'only discoveries before this time (pagination)' })),
          poor: Type.Boolean({ default: false, description: 'only empty or low-confidence shortlists' }),
        }),
        response: {
          200: Type.Object({
            discoveries: Type.Array(
              Type.Object({
                discovery_id: Type.String(),
                at: Type.String(),
                subject: Type.Union([Type.String(), Type.Null()]),
                query: Type.String(),
                shortlist: Type.Array(Type.Object({ name: Type.String(), version: Type.String(), score: Type.Number() })),
                search_mode: Type.String(),
                low_confidence: Type.Boolean(),
                latency_ms: Type.Number(),
              }),
            ),
          }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const query = request.query;
      const rows = await options.report.recent(request.principal.tenant, {
        limit: query.limit,
        before: query.before === undefined ? undefined : new Date(query.before),
        poorOnly: query.poor,
      });
      return {
        discoveries: rows.map((r) => ({
          discovery_id: r.id,
          at: r.at.toISOString(),
          subject: r.subject,
          query: r.query,
          shortlist: r.shortlist,
          search_mode: r.searchMode,
          low_confidence: r.lowConfidence,
          latency_ms: Math.round(r.latencyMs * 100) / 100,
        })),
      };
    },
  );
}
