import { fileURLToPath } from 'node:url';

import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** The UI's static files: plain HTML, JS and CSS, served as they are (no build step). */
export const UI_ROOT = fileURLToPath(new URL('./public/', import.meta.url));

/**
 * Strict policy: scripts, styles and fetches from this origin only, no inline code, no frames.
 * The UI talks to the same origin's API, so `connect-src 'self'` is all it needs.
 */
const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * /ui: the catalog browser and discovery playground. Public files only; every API call the page
 * makes carries the token the user pasted, checked like any other client's.
 */
export default async function uiRoutes(app: FastifyInstance): Promise<void> {
  app.addHook('onSend', async (_request, reply) => {
    reply.header('content-security-policy', UI_CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('cross-origin-opener-policy', 'same-origin');
  });
  await app.register(fastifyStatic, {
    root: UI_ROOT,
    prefix: '/ui/',
    index: 'index.html',
    decorateReply: false,
    wildcard: false,
    schemaHide: true,
    cacheControl: true,
    maxAge: 60_000,
  });
}
