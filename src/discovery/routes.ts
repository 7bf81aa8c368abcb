import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

import { PUBLISH_SCOPE } from '../auth/principal.js';
import { errorResponses } from '../http/schemas.js';
import type { DiscoveryReport } from './log-report.js';
import { POOR_SCAN_ROWS } from './log-repository.js';
import { DiscoverBody, DiscoverResponse } from './schemas.js';
import type { DiscoveryService } from './service.js';

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
    // The service checks the request (query, filters) for every door alike.
    async (request) => options.discovery.discover(request.principal, request.body),
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
            next_before: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
              description: `pass as \`before\` for the next page; null on the last. A \`poor=true\` page examines at most ${POOR_SCAN_ROWS.toLocaleString('en')} discoveries, so it may hold fewer than \`limit\`, or none, and still name a next page`,
            }),
          }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const query = request.query;
      const { rows, nextBefore } = await options.report.recent(request.principal.tenant, {
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
        next_before: nextBefore?.toISOString() ?? null,
      };
    },
  );
}
