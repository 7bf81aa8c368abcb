import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';

import type { Config } from '../config.js';
import { AppError } from '../errors.js';

/** The buckets a principal spends: each has its own per-minute limit in the configuration. */
type RateLimitGroup = 'discover' | 'authorize' | 'mcp' | 'publish';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Opts a route into a per-principal limit (routes in LIMITED_ROUTES are opted in already). */
    principalRateLimit?: RateLimitGroup;
  }
  interface FastifyInstance {
    /**
     * Spends one discovery of the caller's budget, whatever the door (POST /v1/discover, MCP
     * find_tools): 429 `rate_limited` once spent. With a reply, sets the x-ratelimit-* headers.
     */
    spendDiscovery: (request: FastifyRequest, reply?: FastifyReply) => Promise<void>;
  }
}

/**
 * The routes limited per principal, by `METHOD url`. Listing a route here covers it whenever it is
 * registered (after this plugin), so /v1/authorize is limited as soon as its routes land.
 */
const LIMITED_ROUTES: Readonly<Record<string, RateLimitGroup>> = {
  'POST /v1/discover': 'discover',
  'POST /v1/authorize': 'authorize',
  // A call is an authorize decision first: the same bucket.
  'POST /v1/call': 'authorize',
  'POST /mcp': 'mcp',
  // Publishing compiles the publisher's schemas in the event loop, dry runs included.
  'POST /v1/tools': 'publish',
  'PUT /v1/tools/:name': 'publish',
  // One sync is one request of the publish budget, however many tools it carries: its body limit
  // bounds its work, and an unchanged re-sync compiles nothing.
  'POST /v1/catalog/sync': 'publish',
};

const WINDOW_MS = 60_000;

/**
 * The bucket key: tenant and subject from the verified token. The limiter runs as a preHandler,
 * after the auth hook; a route without a principal falls back to the client address.
 */
function principalKey(request: FastifyRequest): string {
  const principal = request.principal as FastifyRequest['principal'] | null;
  if (!principal) return `ip:${request.ip}`;
  return `p:${principal.tenant}\u0000${principal.subject ?? ''}`;
}

function groupOf(route: RouteOptions): RateLimitGroup | undefined {
  const explicit = route.config?.principalRateLimit;
  if (explicit) return explicit;
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  for (const method of methods) {
    const group = LIMITED_ROUTES[`${method.toUpperCase()} ${route.url}`];
    if (group) return group;
  }
  return undefined;
}

const rateLimited = (max: number, ttlMs: number): AppError => {
  const seconds = Math.max(1, Math.ceil(ttlMs / 1000));
  return new AppError('rate_limited', `rate limit of ${max} requests per minute exceeded; retry in ${seconds} s`, [], { 'retry-after': String(seconds) });
};

/** Appends `hook` to a route's preHandler hooks. */
function addPreHandler(route: RouteOptions, hook: preHandlerHookHandler): void {
  const current = route.preHandler;
  route.preHandler = current === undefined ? [hook] : Array.isArray(current) ? [...current, hook] : [current, hook];
}

/**
 * Per-principal rate limits (@fastify/rate-limit, in-memory per replica) on discovery, authorize,
 * MCP and publishing. Register before the routes it covers. A 429 carries Retry-After and the contract's
 * error body with code `rate_limited`. Discovery has one budget per principal whatever the door
 * (issue 32, finding 9: REST and MCP find_tools each had their own): the `discover` routes and
 * `spendDiscovery` (called by find_tools) draw on one shared counter.
 */
export default fp(
  async (app: FastifyInstance, options: { limits: Config['rateLimit'] }) => {
    const perMinute: Record<RateLimitGroup, number> = {
      discover: options.limits.discoverPerMinute,
      authorize: options.limits.authorizePerMinute,
      mcp: options.limits.mcpPerMinute,
      publish: options.limits.publishPerMinute,
    };
    // Runs before @fastify/rate-limit's own onRoute hook, which reads config.rateLimit.
    app.addHook('onRoute', (route) => {
      const group = groupOf(route);
      if (!group || perMinute[group] <= 0) return;
      if (group === 'discover') addPreHandler(route, async (request, reply) => app.spendDiscovery(request, reply));
      else route.config = { ...route.config, rateLimit: { max: perMinute[group], timeWindow: WINDOW_MS } };
    });
    await app.register(rateLimit, {
      global: false,
      hook: 'preHandler',
      cache: 10_000,
      keyGenerator: principalKey,
      errorResponseBuilder: (_request, context) => rateLimited(context.max, context.ttl),
    });
    // One counter (created once) for every door to discovery.
    const discovery = perMinute.discover > 0 ? app.createRateLimit({ max: perMinute.discover, timeWindow: WINDOW_MS }) : undefined;
    app.decorate('spendDiscovery', async (request: FastifyRequest, reply?: FastifyReply) => {
      if (!discovery) return;
      const outcome = await discovery(request);
      if (outcome.isAllowed) return;
      reply?.headers({ 'x-ratelimit-limit': outcome.max, 'x-ratelimit-remaining': outcome.remaining, 'x-ratelimit-reset': outcome.ttlInSeconds });
      if (outcome.isExceeded) throw rateLimited(outcome.max, outcome.ttl);
    });
  },
  { name: 'principal-rate-limit', dependencies: ['auth', 'error-handler'] },
);
