import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';

import Fastify, { type FastifyBaseLogger, type FastifyHttpOptions, type FastifyInstance, type FastifyReply } from 'fastify';

import auditRoutes from './audit/routes.js';
import authPlugin from './auth/plugin.js';
import type { TokenVerifier } from './auth/verifier.js';
import authorizeRoutes from './authorize/routes.js';
import catalogRoutes from './catalog/routes.js';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import databasePlugin from './db/plugin.js';
import type { ReadReplica } from './db/read-replica.js';
import discoveryRoutes from './discovery/routes.js';
import type { EmbeddingIndexer } from './embedding/indexer.js';
import { indexProgress } from './embedding/progress.js';
import type { Embedder } from './embedding/provider.js';
import { indexStatus } from './embedding/repository.js';
import { refuseWhileBusy } from './http/busy-gate.js';
import { capConnectionsPerClient } from './http/connection-cap.js';
import cors from './http/cors.js';
import errorHandler, { type ErrorBody } from './http/error-handler.js';
import healthRoutes, { type IndexReadiness } from './http/health-routes.js';
import openapi from './http/openapi.js';
import principalRateLimit from './http/rate-limit.js';
import { logToolName } from './http/request-log.js';
import learningRoutes from './learning/routes.js';
import { learnedAliasView } from './learning/views.js';
import resourceMetadataRoutes from './mcp/resource-metadata.js';
import mcpRoutes from './mcp/routes.js';
import metricsPlugin from './metrics/plugin.js';
import { createServices, type Services } from './services.js';
import settingsRoutes from './settings/routes.js';
import httpSpans from './telemetry/http-spans.js';
import { activeTracer } from './telemetry/tracer.js';
import { catalogSize } from './tools/catalog-size.js';
import toolRoutes from './tools/routes.js';
import uiRoutes from './ui/plugin.js';
import upstreamRoutes from './upstreams/routes.js';
import { VERSION } from './version.js';

/** What the app needs from the outside world; the caller opens and migrates the database. */
export interface AppDependencies {
  config: Config;
  database: Database;
  /** DATABASE_READ_URL's replica, opened and checked by the caller; absent: the primary serves every read. */
  readReplica?: ReadReplica;
  /** Close the database when the app closes (the server does; tests sharing one do not). */
  ownsDatabase: boolean;
  verify: TokenVerifier;
  /** The loaded embedder; absent means lexical-only discovery (EMBEDDING_PROVIDER=none). */
  embedder?: Embedder;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Background vector maintenance; undefined without an embedder. */
    indexer: EmbeddingIndexer | undefined;
  }
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify options shared by the server and the tests (the server adds its logger). */
export function fastifyOptions(config: Config, logger?: FastifyBaseLogger): FastifyHttpOptions<Server> {
  return {
    ...(logger ? { loggerInstance: logger } : { logger: false }),
    bodyLimit: config.limits.bodyBytes,
    // Honour a caller's x-request-id only when it is a sane token; otherwise mint one.
    requestIdHeader: false,
    genReqId: (request: IncomingMessage) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    return503OnClosing: true,
    // Router-level failures (undecodable URL, over-long path parameter) skip the error handler:
    // answer them in the contract's format too, without echoing the path.
    frameworkErrors: (error, request, reply) => {
      const message = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path parameter is too long' : 'the URL is malformed';
      const body: ErrorBody = { error: { code: 'bad_request', message, details: [], request_id: String(request.id) } };
      void (reply as FastifyReply).code(400).send(body);
    },
    // Slow-loris bounds: a request arrives whole within requestTimeout and its headers within
    // headersTimeout. Node checks them every connectionsCheckingInterval (30 s by default, which let
    // a 30 s limit run to ~60 s and more); once a second keeps them within a second of the setting.
    requestTimeout: config.limits.requestTimeoutMs,
    http: { headersTimeout: config.limits.headersTimeoutMs, connectionsCheckingInterval: 1_000 },
    routerOptions: { maxParamLength: 256, ignoreTrailingSlash: true },
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', removeAdditional: false } },
  };
}

/** Gauges and counters read from the services' own statistics. */
function trackServices(app: FastifyInstance, services: Services, deps: AppDependencies): void {
  app.metrics.trackDiscoveryLog(services.discoveryLog.stats);
  app.metrics.trackShortlistQuality(services.shortlistQuality.stats);
  app.metrics.trackCatalogSize(() => catalogSize(app.reads));
  if (services.shortlists.enabled) app.metrics.trackShortlistCache(services.shortlists.stats);
  if (services.queryEmbeddings) app.metrics.trackQueryEmbeddings(services.queryEmbeddings.stats);
  const encoder = deps.embedder;
  if (encoder?.counters) app.metrics.trackEncoder(() => encoder.counters!());
  if (deps.database.pool) app.metrics.trackPool(deps.database.pool);
  if (deps.readReplica) app.metrics.trackReadReplica(deps.readReplica);
  if (services.indexer) app.metrics.trackIndexing(services.indexer);
}

/** Background work starts once the app is ready and stops before it closes; buffered logs flush last. */
function runWithApp(app: FastifyInstance, services: Services): void {
  // Registered after the database plugin, so it runs before the database closes: nothing buffered is lost.
  app.addHook('onClose', async () => services.discoveryLog.flush());
  app.addHook('onClose', async () => services.upstreams.clients.close());
  const { indexer } = services;
  app.decorate('indexer', indexer);
  for (const job of [...services.jobs, ...(indexer ? [indexer] : [])]) {
    app.addHook('onReady', async () => job.start());
    app.addHook('preClose', async () => job.stop());
  }
}

const secondsSince = (epochMs: number): number => Math.round((Date.now() - epochMs) / 1000);

/** Why the database cannot answer now: the embedded database's vector index build holds it. */
function databaseHeldBy(indexer: EmbeddingIndexer | undefined): string | undefined {
  const build = indexer?.indexBuild;
  return build?.blocking ? `building the vector index (embedded database, once per model, ${secondsSince(build.since)} s so far)` : undefined;
}

/** Readiness of the vector index: a concurrent build still serves, large catalogs searched exactly meanwhile. */
function vectorIndexReadiness(indexer: EmbeddingIndexer | undefined): string {
  const build = indexer?.indexBuild;
  if (!indexer) return 'disabled';
  if (!build) return 'ok';
  const since = `${secondsSince(build.since)} s so far`;
  return build.blocking ? `building (${since})` : `degraded: building concurrently (${since}); catalogs past VECTOR_INDEX_MIN_TOOLS are searched exactly until it is built`;
}

/** The service-wide index backlog for readiness, at the indexer's recent rate. */
async function indexReadiness(indexer: EmbeddingIndexer): Promise<IndexReadiness> {
  const { pending, failed } = await indexer.backlog();
  const rate = indexer.throughput.textsPerSecond;
  return { pending, failed, texts_per_second: rate === undefined ? null : Math.round(rate * 10) / 10, eta_seconds: indexer.throughput.etaSeconds(pending) ?? null };
}

/** Builds the application (never listens): plugins in tiers, then encapsulated routes. */
export async function buildApp(deps: AppDependencies, logger?: FastifyBaseLogger): Promise<FastifyInstance> {
  const app = Fastify(fastifyOptions(deps.config, logger));
  // First, so the request's span is the parent of everything else it runs (tracing on only).
  if (activeTracer()) await app.register(httpSpans);
  capConnectionsPerClient(app.server, deps.config.limits.connectionsPerClient);
  // The API speaks JSON only: any other body type is a 415, not a string handed to a handler.
  app.removeContentTypeParser('text/plain');
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  // After authentication (which names the tenant and subject) and body parsing, on every route.
  app.addHook('preHandler', logToolName);

  await app.register(errorHandler);
  await app.register(openapi, { version: VERSION });
  await app.register(metricsPlugin, { token: deps.config.metricsToken });
  await app.register(databasePlugin, { database: deps.database, readReplica: deps.readReplica, owned: deps.ownsDatabase });
  await app.register(authPlugin, { verify: deps.verify });
  await app.register(cors, { origins: deps.config.cors.origins });
  // Before every route it limits (discover, authorize, mcp): it tags them as they are added.
  await app.register(principalRateLimit, { limits: deps.config.rateLimit });

  const services = createServices(deps.config, {
    database: deps.database,
    reads: app.reads,
    readsAs: app.readsAs,
    embedder: deps.embedder,
    log: app.log,
    onDiscoveryTimings: (timings, mode, vectorSearch) => app.metrics.observeDiscovery(timings, mode, vectorSearch),
    onAuthorizeDecision: (decision) => app.metrics.recordAuthorizeDecision(decision.decision, decision.reasons[0]?.code),
    onUpstreamCall: (outcome, seconds) => app.metrics.recordUpstreamCall(outcome, seconds),
  });
  const { tools, discovery, learning, indexer } = services;
  trackServices(app, services, deps);
  runWithApp(app, services);

  const busy = () => databaseHeldBy(indexer);
  await app.register(healthRoutes, {
    checks: {
      embedder: () => (indexer ? (indexer.status === 'ok' ? 'ok' : `degraded: ${indexer.status}`) : 'disabled'),
      vector_index: () => vectorIndexReadiness(indexer),
    },
    busy,
    ...(indexer ? { index: () => indexReadiness(indexer) } : {}),
  });
  const whileBusy = refuseWhileBusy(busy);
  await app.register(async (api) => {
    api.addHook('onRequest', whileBusy);
    api.addHook('onRequest', api.authenticate);
    const embedder = deps.embedder;
    // Without an embedder there are no vectors to wait for: the lexical index is written with the tool.
    const toolIndexStatus = embedder ? (toolId: number) => indexStatus(deps.database.db, toolId, embedder.model) : async () => 'indexed' as const;
    const learnedAliases = async (toolId: number) => (await learning.listFor(toolId)).map(learnedAliasView);
    await api.register(toolRoutes, { tools, learnedAliases, limits: deps.config.limits, indexStatus: toolIndexStatus });
    await api.register(discoveryRoutes, { discovery, report: services.discoveryReport });
    await api.register(authorizeRoutes, { authorize: services.authorize });
    await api.register(auditRoutes, { audit: services.audit });
    await api.register(learningRoutes, { learning });
    await api.register(settingsRoutes, { settings: services.settings });
    await api.register(upstreamRoutes, { upstreams: services.upstreams, calls: services.calls });
    await api.register(catalogRoutes, {
      sync: services.catalog,
      bodyLimit: deps.config.limits.catalogSyncBytes,
      indexProgress: (tenantId, source) => indexProgress(deps.database.db, indexer, { tenantId, ...(source === undefined ? {} : { source }) }),
    });
  });
  await app.register(async (scope) => {
    scope.addHook('onRequest', whileBusy);
    await scope.register(mcpRoutes, { discovery, tools, calls: services.calls, oauth: deps.config.oauth });
  });
  await app.register(resourceMetadataRoutes, { oauth: deps.config.oauth });
  await app.register(uiRoutes);
  return app;
}
