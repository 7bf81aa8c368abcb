import { context, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

import { activeTracer } from './tracer.js';

/** Probes and scrapes would fill traces with nothing worth reading. */
const UNTRACED_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

/** Span attribute naming the caller's tenant (once the token is verified). */
export const ATTR_TENANT = 'tool_registry.tenant';

const spans = new WeakMap<FastifyRequest, Span>();

function finish(request: FastifyRequest, statusCode: number | undefined): void {
  const span = spans.get(request);
  if (!span) return;
  spans.delete(request);
  // principal is decorated null until the auth hook of a protected route sets it.
  const tenant = (request.principal as { tenant?: string } | null)?.tenant;
  if (tenant !== undefined) span.setAttribute(ATTR_TENANT, tenant);
  if (statusCode === undefined) {
    span.setAttribute(ATTR_ERROR_TYPE, 'aborted');
  } else {
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode);
    // Server spans: a 4xx is the caller's doing, not a failure of the service.
    if (statusCode >= 500) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      span.setAttribute(ATTR_ERROR_TYPE, String(statusCode));
    }
  }
  span.end();
}

/**
 * A server span per HTTP request (`POST /v1/discover`), continuing the caller's trace when it
 * sends a W3C `traceparent`. A small hook rather than auto-instrumentation: the rest of the
 * request (hooks, body parsing, handler, database statements) runs in the span's context, so
 * every span it starts is a child. Registered by the app only while tracing is on.
 */
export default fp(
  async (app: FastifyInstance) => {
    app.addHook('onRequest', (request, _reply, done) => {
      const tracer = activeTracer();
      const route = request.routeOptions.url;
      if (!tracer || (route !== undefined && UNTRACED_ROUTES.has(route))) return done();
      const parent = propagation.extract(ROOT_CONTEXT, request.headers);
      const attributes = {
        [ATTR_HTTP_REQUEST_METHOD]: request.method,
        [ATTR_URL_PATH]: request.url.split('?', 1)[0],
        [ATTR_URL_SCHEME]: request.protocol,
        ...(route === undefined ? {} : { [ATTR_HTTP_ROUTE]: route }),
      };
      const span = tracer.startSpan(route === undefined ? request.method : `${request.method} ${route}`, { kind: SpanKind.SERVER, attributes }, parent);
      spans.set(request, span);
      const active = trace.setSpan(parent, span);
      // The body arrives in events of the raw request: bound, its listeners (and the handler
      // they lead to) run in the span's context too.
      context.bind(active, request.raw);
      context.with(active, done);
    });
    app.addHook('onResponse', async (request, reply) => finish(request, reply.statusCode));
    app.addHook('onRequestAbort', async (request) => finish(request, undefined));
  },
  { name: 'http-spans' },
);
