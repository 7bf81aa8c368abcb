import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

import { PUBLISH_SCOPE } from '../auth/principal.js';
import { errorResponses } from '../http/schemas.js';
import { ToolName } from '../tools/model.js';
import { LearnedAlias } from '../tools/schemas.js';
import type { LearningService } from './service.js';
import { learnedAliasView } from './views.js';

const AliasParams = Type.Object({ name: ToolName, id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER }) });

/** Learned aliases (list, remove) and the misses report: publishers of the tenant only. */
export default async function learningRoutes(scope: FastifyInstance, options: { learning: LearningService }): Promise<void> {
  const { learning } = options;
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const publish = app.requireScope(PUBLISH_SCOPE);

  app.get(
    '/v1/tools/:name/learned-aliases',
    {
      onRequest: publish,
      schema: {
        summary: 'Queries learned from calls that discovery had not offered this tool for',
        tags: ['learning'],
        params: Type.Object({ name: ToolName }),
        response: { 200: Type.Object({ learned_aliases: Type.Array(LearnedAlias) }), ...errorResponses(401, 403, 404) },
      },
    },
    async (request) => {
      const rows = await learning.list(request.principal, request.params.name);
      return { learned_aliases: rows.map(learnedAliasView) };
    },
  );

  app.delete(
    '/v1/tools/:name/learned-aliases/:id',
    {
      onRequest: publish,
      schema: {
        summary: 'Remove a learned alias',
        tags: ['learning'],
        params: AliasParams,
        response: { 204: Type.Null(), ...errorResponses(401, 403, 404) },
      },
    },
    async (request, reply) => {
      const { name, id } = request.params;
      await learning.remove(request.principal, name, id);
      return reply.code(204).send(null);
    },
  );

  for (const [action, review, summary] of [
    ['approve', 'approved', 'Approve a learned alias: it ranks once enough distinct subjects taught it (needed for high-sensitivity or side-effecting tools)'],
    ['reject', 'rejected', 'Reject a learned alias: it never ranks and is not learned again'],
  ] as const) {
    app.post(
      `/v1/tools/:name/learned-aliases/:id/${action}`,
      {
        onRequest: publish,
        schema: {
          summary,
          tags: ['learning'],
          params: AliasParams,
          response: { 200: Type.Object({ learned_alias: LearnedAlias }), ...errorResponses(401, 403, 404) },
        },
      },
      async (request) => {
        const { name, id } = request.params;
        return { learned_alias: learnedAliasView(await learning.review(request.principal, name, id, review)) };
      },
    );
  }

  app.get(
    '/v1/reports/misses',
    {
      onRequest: publish,
      schema: {
        summary: 'Tools agents called without discovery offering them, and discoveries that ended in no call',
        tags: ['learning'],
        querystring: Type.Object({
          days: Type.Integer({ minimum: 1, maximum: 365, default: 7 }),
          limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
        }),
        response: {
          200: Type.Object({
            missed_tools: Type.Array(Type.Object({ name: Type.String(), misses: Type.Integer(), queries: Type.Array(Type.String()) })),
            unanswered_discoveries: Type.Array(
              Type.Object({
                discovery_id: Type.String(),
                at: Type.String({ format: 'date-time' }),
                query: Type.String(),
                shortlist: Type.Array(Type.Object({ name: Type.String(), score: Type.Number() })),
                low_confidence: Type.Boolean(),
              }),
            ),
          }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const { days, limit } = request.query;
      const [missed, unanswered] = await learning.report(request.principal.tenant, days, limit);
      return {
        missed_tools: missed,
        unanswered_discoveries: unanswered.map((d) => ({
          discovery_id: d.id,
          at: d.at.toISOString(),
          query: d.query,
          shortlist: d.shortlist.map((t) => ({ name: t.name, score: t.score })),
          low_confidence: d.lowConfidence,
        })),
      };
    },
  );
}
