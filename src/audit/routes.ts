import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

import { PUBLISH_SCOPE } from '../auth/principal.js';
import { errorResponses } from '../http/schemas.js';
import { AUDIT_SCAN_ROWS } from './repository.js';
import { AuditEntry, AuditListQuery } from './schemas.js';
import type { AuditService } from './service.js';

/** GET /v1/audit: the tenant's publishes, retirements and authorize decisions (publishers). */
export default async function auditRoutes(app: FastifyInstance, options: { audit: AuditService }): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/v1/audit',
    {
      onRequest: app.requireScope(PUBLISH_SCOPE),
      schema: {
        summary: 'Audit log of the caller\'s tenant, newest first',
        tags: ['audit'],
        querystring: AuditListQuery,
        response: {
          200: Type.Object({
            entries: Type.Array(AuditEntry),
            next_before: Type.Union([Type.Integer(), Type.Null()], {
              description: `pass as \`before\` for the next page; null on the last. A page filtered by action or tool examines at most ${AUDIT_SCAN_ROWS.toLocaleString('en')} records, so it may hold fewer than \`limit\` entries, or none, and still name a next page`,
            }),
          }),
          ...errorResponses(400, 401, 403),
        },
      },
    },
    async (request) => {
      const { rows, nextBefore } = await options.audit.page(request.principal.tenant, request.query);
      return {
        entries: rows.map((r) => ({
          id: r.id,
          at: r.at.toISOString(),
          actor: r.actor,
          action: r.action,
          tool: { name: r.toolName, version: r.toolVersion },
          decision: r.decision as 'allow' | 'deny' | null,
          reasons: r.reasons,
          discovery_id: r.discoveryId,
          ...(r.details ? { details: r.details } : {}),
        })),
        next_before: nextBefore,
      };
    },
  );
}
