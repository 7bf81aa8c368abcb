import { createHash, timingSafeEqual } from 'node:crypto';

import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

import { AppError } from '../errors.js';
import { ServiceMetrics } from './metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's Prometheus metrics (its own registry). */
    metrics: ServiceMetrics;
  }
}

interface MetricsOptions {
  /** Process metrics (CPU, memory, event loop lag, GC); on by default. */
  defaultMetrics?: boolean;
  /** Bearer token GET /metrics requires (METRICS_TOKEN); absent: public. */
  token?: string;
}

/** Whether the request carries `Authorization: Bearer <token>`, compared in constant time. */
function presents(request: FastifyRequest, token: string): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
  const given = createHash('sha256').update(match?.[1] ?? '').digest();
  return match !== null && timingSafeEqual(given, createHash('sha256').update(token).digest());
}

const DISCOVER_ROUTE = '/v1/discover';
const started = new WeakMap<FastifyRequest, number>();

/**
 * Prometheus metrics: request duration per route template and status, and `GET /metrics`
 * (text exposition format; public unless a token is configured). Other parts record through
 * `app.metrics`.
 */
export default fp(
  async (app: FastifyInstance, options: MetricsOptions) => {
    const metrics = new ServiceMetrics({ defaultMetrics: options.defaultMetrics });
    app.decorate('metrics', metrics);

    // Authentication time of discovery: from the first onRequest hook (this one, registered at the
    // root) to the first preParsing hook, i.e. the scope's authenticate hook in between.
    app.addHook('onRequest', async (request) => {
      if (request.routeOptions.url === DISCOVER_ROUTE) started.set(request, performance.now());
    });
    app.addHook('preParsing', async (request) => {
      const at = started.get(request);
      if (at !== undefined) metrics.observeDiscoveryAuth(performance.now() - at);
    });
    app.addHook('onResponse', async (request, reply) => {
      metrics.httpDuration.observe(
        { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) },
        reply.elapsedTime / 1000,
      );
    });

    app.get(
      '/metrics',
      { schema: { summary: 'Prometheus metrics (text exposition format)', tags: ['operations'], security: [], hide: false } },
      async (request, reply) => {
        if (options.token !== undefined && !presents(request, options.token)) {
          throw new AppError('unauthorized', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>', [], { 'www-authenticate': 'Bearer' });
        }
        const body = await metrics.registry.metrics();
        return reply.type(metrics.registry.contentType).send(body);
      },
    );
  },
  { name: 'metrics' },
);
