import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

import { PUBLISH_SCOPE } from '../auth/principal.js';
import { errorResponses } from '../http/schemas.js';
import type { AuditService } from './service.js';

const AuditEntry = Type.Object({
  id: Type.Integer(),
  at: Type.String({ format: 'date-time' }),
  actor: Type.Union([Type.String(), Type.Null()]),
  action: Type.String({ description: 'publish, restore, retire, authorize, approve_alias or reject_alias' }),
  tool: Type.Object({ name: Type.String(), version: Type.Union([Type.String(), Type.Null()]) }),
  decision: Type.Union([Type.Enum(['allow', 'deny']), Type.Null()]),
  reasons: Type.Union([Type.Array(Type.Unknown()), Type.Null()]),
  discovery_id: Type.Union([Type.String(), Type.Null()]),
});

/** GET /v1/audit: the tenant's publishes, retirements and authorize decisions (publishers). */
export default async function auditRoutes(app: FastifyInstance, options: { audit: AuditService }): Promise<void> {
  app.get(
    '/v1/audit',
    {
      onRequest: app.requireScope(PUBLISH_SCOPE),
      schema: {
        summary: 'Audit log of the caller\'s tenant, newest first',
        tags: ['audit'],
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
          before: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'only entries with a smaller id (pagination)' })),
          action: Type.Optional(Type.Enum(['publish', 'restore', 'retire', 'authorize', 'approve_alias', 'reject_alias'])),
          tool: Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: { 200: Type.Object({ entries: Type.Array(AuditEntry), next_before: Type.Union([Type.Integer(), Type.Null()]) }), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const query = request.query as { limit: number; before?: number; action?: string; tool?: string };
      const { rows, nextBefore } = await options.audit.page(request.principal.tenant, query);
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
        })),
        next_before: nextBefore,
      };
    },
  );
}
