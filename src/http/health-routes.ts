import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';

import { databaseReadiness } from '../db/plugin.js';

interface HealthOptions {
  /** Extra readiness checks (e.g. the embedder): name -> 'ok' | 'disabled' | 'degraded: …' | a failure text. */
  checks?: Record<string, () => string>;
  /** What holds the database now, if anything: readiness then says so at once instead of waiting for it. */
  busy?: () => string | undefined;
  /** The service-wide vector index backlog and rate (absent without an embedder). */
  index?: () => Promise<IndexReadiness>;
}

/** What readiness reports of indexing: a backlog degrades (those tools are found lexically only), never fails. */
export interface IndexReadiness {
  pending: number;
  failed: number;
  texts_per_second: number | null;
  eta_seconds: number | null;
}

const IndexReadinessView = Type.Object(
  {
    pending: Type.Integer({ description: 'active tools waiting for vectors' }),
    failed: Type.Integer({ description: 'active tools whose last embedding attempt failed (retried)' }),
    texts_per_second: Type.Union([Type.Number(), Type.Null()], { description: 'recent indexing rate; null before the first batch' }),
    eta_seconds: Type.Union([Type.Number(), Type.Null()], { description: 'until the backlog is indexed at that rate; null while unknown' }),
  },
  { description: 'vector indexing: present with an embedder' },
);

/** The readiness line of a backlog: ok, or degraded with the counts and the ETA. */
function backlogCheck(index: IndexReadiness): string {
  if (index.pending === 0 && index.failed === 0) return 'ok';
  const eta = index.eta_seconds === null ? 'ETA unknown' : `ETA ${index.eta_seconds} s`;
  return `degraded: ${index.pending} tools waiting for vectors, ${index.failed} failed (${eta}); they are found by lexical search meanwhile`;
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

  const Readiness = Type.Object({ status: Type.String(), checks: Type.Record(Type.String(), Type.String()), index: Type.Optional(IndexReadinessView) });
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
      // Counted only while the database answers (its own check says when it does not).
      const index = options.index && checks.database === 'ok' ? await options.index().catch(() => undefined) : undefined;
      if (index) checks.index_backlog = backlogCheck(index);
      // A degraded embedder still serves (lexical discovery), so it does not fail readiness.
      const ready = Object.values(checks).every((value) => READY_VALUES.has(value) || value.startsWith('degraded'));
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks, ...(index ? { index } : {}) });
    },
  );
}
