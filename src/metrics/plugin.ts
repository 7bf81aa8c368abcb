import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

import { ServiceMetrics } from './metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's Prometheus metrics (its own registry). */
    metrics: ServiceMetrics;
  }
}

export interface MetricsOptions {
  /** Process metrics (CPU, memory, event loop lag, GC); on by default. */
  defaultMetrics?: boolean;
}

const DISCOVER_ROUTE = '/v1/discover';
const started = new WeakMap<FastifyRequest, number>();

/**
 * Prometheus metrics: request duration per route template and status, and `GET /metrics`
 * (unauthenticated, text exposition format). Other parts record through `app.metrics`.
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
      async (_request, reply) => {
        const body = await metrics.registry.metrics();
        return reply.type(metrics.registry.contentType).send(body);
      },
    );
  },
  { name: 'metrics' },
);
