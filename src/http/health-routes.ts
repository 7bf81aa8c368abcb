import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

import { databaseReadiness } from '../db/plugin.js';

interface HealthOptions {
  /** Extra readiness checks (e.g. the embedder): name -> 'ok' | 'disabled' | 'degraded: …' | a failure text. */
  checks?: Record<string, () => string>;
  /** What holds the database now, if anything: readiness then says so at once instead of waiting for it. */
  busy?: () => string | undefined;
}

const READY_VALUES = new Set(['ok', 'disabled']);

/** Liveness and readiness: unauthenticated, for load balancers and orchestrators. */
export default async function healthRoutes(scope: FastifyInstance, options: HealthOptions): Promise<void> {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/healthz',
    { schema: { summary: 'Liveness', tags: ['operations'], security: [], response: { 200: Type.Object({ status: Type.Literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  );

  const Readiness = Type.Object({ status: Type.String(), checks: Type.Record(Type.String(), Type.String()) });
  app.get(
    '/readyz',
    { schema: { summary: 'Readiness: database (and read replica) reachable, migrations applied, embedder loaded, no vector index build holding the database', tags: ['operations'], security: [], response: { 200: Readiness, 503: Readiness } } },
    async (_request, reply) => {
      const busy = options.busy?.();
      const checks: Record<string, string> = busy === undefined ? { ...(await databaseReadiness(app.database)) } : { database: `busy: ${busy}` };
      // A fresh look at the replica: an unusable one degrades readiness (the primary serves its reads).
      if (app.readReplica && busy === undefined) {
        await app.readReplica.check();
        checks.read_replica = app.readReplica.readiness();
      }
      for (const [name, check] of Object.entries(options.checks ?? {})) checks[name] = check();
      // A degraded embedder still serves (lexical discovery), so it does not fail readiness.
      const ready = Object.values(checks).every((value) => READY_VALUES.has(value) || value.startsWith('degraded'));
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
    },
  );
}
