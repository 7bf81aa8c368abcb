import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';

import { AppError } from '../errors.js';
import { logWith } from '../telemetry/log-context.js';
import type { Principal } from './principal.js';
import type { TokenVerifier } from './verifier.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** onRequest hook for protected scopes: verifies the bearer token, sets request.principal. */
    authenticate: onRequestHookHandler;
    /** onRequest hook factory (runs after authenticate): 403 unless the principal holds `scope`. */
    requireScope: (scope: string) => onRequestHookHandler;
  }
  interface FastifyRequest {
    principal: Principal;
  }
}

const BEARER = /^Bearer\s+([A-Za-z0-9\-_.~+/]+=*)\s*$/i;

/** The bearer token of a request: only the Authorization header counts, never the query string. */
export function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  const match = header === undefined ? null : BEARER.exec(header);
  if (!match?.[1]) {
    throw new AppError('unauthorized', header === undefined ? 'missing Authorization: Bearer token' : 'malformed Authorization header', [], {
      'www-authenticate': 'Bearer',
    });
  }
  return match[1];
}

export default fp(
  async (app: FastifyInstance, options: { verify: TokenVerifier }) => {
    app.decorateRequest('principal', null as unknown as Principal);
    app.decorate('authenticate', async (request: FastifyRequest, reply: FastifyReply) => {
      const principal = await options.verify(bearerToken(request));
      request.principal = principal;
      // Every later line of the request's log says who called (the subject as the token gives it).
      logWith(request, reply, { tenant: principal.tenant, subject: principal.subject });
    });
    app.decorate('requireScope', (scope: string): onRequestHookHandler => async (request) => {
      if (!request.principal.scopes.includes(scope)) throw new AppError('forbidden', `this operation needs scope '${scope}'`);
    });
  },
  { name: 'auth' },
);
