import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/** Request headers browser clients may send (API, conditional requests, MCP). */
const ALLOWED_HEADERS = ['authorization', 'content-type', 'if-match', 'if-none-match', 'x-request-id', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];

/** Response headers browser clients may read. */
const EXPOSED_HEADERS = ['etag', 'location', 'retry-after', 'x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'mcp-session-id'];

/**
 * CORS for browser clients on other origins (CORS_ORIGINS). Without origins nothing is
 * registered: the UI at /ui is same-origin and needs no CORS, and other origins are refused by
 * the browser. Tokens travel in the Authorization header, never cookies, so credentials stay off.
 */
export default fp(
  async (app: FastifyInstance, options: { origins: readonly string[] }) => {
    if (options.origins.length === 0) return;
    await app.register(cors, {
      origin: options.origins.includes('*') ? '*' : [...options.origins],
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
      allowedHeaders: ALLOWED_HEADERS,
      exposedHeaders: EXPOSED_HEADERS,
      credentials: false,
      maxAge: 600,
    });
  },
  { name: 'cors' },
);
