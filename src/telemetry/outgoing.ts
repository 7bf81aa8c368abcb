import { context, propagation, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions';

import { activeTracer, recordFailure } from './tracer.js';

/** The fetch signature the MCP SDK's transports take. */
export type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * `fetch` that, while tracing is on, wraps each request in a client span and sends the span's
 * W3C `traceparent`, so the server called (an upstream MCP server) continues the caller's trace.
 * The span names the host and port, never the URL's path or query (they may carry a credential).
 */
export function propagatingFetch(fetch: Fetch): Fetch {
  return async (url, init) => {
    const tracer = activeTracer();
    if (!tracer) return fetch(url, init);
    const target = new URL(url);
    const method = init?.method ?? 'GET';
    const attributes = {
      [ATTR_HTTP_REQUEST_METHOD]: method,
      [ATTR_SERVER_ADDRESS]: target.hostname,
      [ATTR_SERVER_PORT]: Number(target.port) || (target.protocol === 'https:' ? 443 : 80),
    };
    return tracer.startActiveSpan(method, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      const headers = new Headers(init?.headers);
      propagation.inject(context.active(), headers, { set: (carrier, key, value) => carrier.set(key, value) });
      try {
        const response = await fetch(url, { ...init, headers });
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, response.status);
        if (response.status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
        return response;
      } catch (error) {
        recordFailure(span, error);
        throw error;
      } finally {
        span.end();
      }
    });
  };
}
