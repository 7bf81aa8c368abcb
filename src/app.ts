import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyServerOptions } from 'fastify';

import auditRoutes from './audit/routes.js';
import authPlugin from './auth/plugin.js';
import authorizeRoutes from './authorize/routes.js';
import { AuthorizeService } from './authorize/service.js';
import type { TokenVerifier } from './auth/verifier.js';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import databasePlugin from './db/plugin.js';
import { CatalogStatsCache } from './discovery/catalog-cache.js';
import discoveryRoutes from './discovery/routes.js';
import { DiscoveryService } from './discovery/service.js';
import { TableMaintenance } from './discovery/table-maintenance.js';
import { DEFAULT_INDEXER_OPTIONS, EmbeddingIndexer } from './embedding/indexer.js';
import type { Embedder } from './embedding/provider.js';
import { QueryEmbeddings } from './embedding/query-cache.js';
import cors from './http/cors.js';
import errorHandler, { type ErrorBody } from './http/error-handler.js';
import healthRoutes from './http/health-routes.js';
import openapi from './http/openapi.js';
import principalRateLimit from './http/rate-limit.js';
import mcpRoutes from './mcp/routes.js';
import metricsPlugin from './metrics/plugin.js';
import learningRoutes from './learning/routes.js';
import { LearningService } from './learning/service.js';
import toolRoutes from './tools/routes.js';
import { ToolService } from './tools/service.js';
import uiRoutes from './ui/plugin.js';
import { VERSION } from './version.js';

/** What the app needs from the outside world; the caller opens and migrates the database. */
export interface AppDependencies {
  config: Config;
  database: Database;
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
export function fastifyOptions(config: Config, logger?: FastifyBaseLogger): FastifyServerOptions {
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
    requestTimeout: 30_000,
    routerOptions: { maxParamLength: 256, ignoreTrailingSlash: true },
    ajv: { customOptions: { allErrors: true, coerceTypes: 'array', removeAdditional: false } },
  };
}

/** Builds the application (never listens): plugins in tiers, then encapsulated routes. */
export async function buildApp(deps: AppDependencies, logger?: FastifyBaseLogger): Promise<FastifyInstance> {
  const app = Fastify(fastifyOptions(deps.config, logger));
  // The API speaks JSON only: any other body type is a 415, not a string handed to a handler.
  app.removeContentTypeParser('text/plain');
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  await app.register(errorHandler);
  await app.register(openapi, { version: VERSION });
  await app.register(metricsPlugin);
  await app.register(databasePlugin, { database: deps.database, owned: deps.ownsDatabase });
  await app.register(authPlugin, { verify: deps.verify });
  await app.register(cors, { origins: deps.config.cors.origins });
  // Before every route it limits (discover, authorize, mcp): it tags them as they are added.
  await app.register(principalRateLimit, { limits: deps.config.rateLimit });

  const { db } = deps.database;
  const tools = new ToolService(db);
  const catalogStats = new CatalogStatsCache();
  const indexer = deps.embedder
    ? new EmbeddingIndexer(db, deps.embedder, app.log, {
        ...DEFAULT_INDEXER_OPTIONS,
        concurrentIndexBuild: deps.database.kind === 'postgres',
        vectorIndexMinTools: deps.config.embedding.vectorIndexMinTools,
      })
    : undefined;
  const queryEmbeddings = deps.embedder ? new QueryEmbeddings(deps.embedder, deps.config.embedding.timeoutMs) : undefined;
  const discovery = new DiscoveryService(db, queryEmbeddings, catalogStats, {
    vectorIndexMinTools: deps.config.embedding.vectorIndexMinTools,
    scoreFloors: deps.config.discovery,
    onTimings: (timings, mode, vectorSearch) => app.metrics.observeDiscovery(timings, mode, vectorSearch),
  });
  if (queryEmbeddings) app.metrics.trackQueryEmbeddings(queryEmbeddings.stats);
  if (deps.database.pool) app.metrics.trackPool(deps.database.pool);
  const learning = new LearningService(db, deps.config.learning, app.log, () => indexer?.notify());
  const authorize = new AuthorizeService(
    db,
    deps.config.learning,
    (decision) => app.metrics.recordAuthorizeDecision(decision.decision, decision.reasons[0]?.code),
    () => indexer?.notify(),
  );
  app.addHook('onReady', async () => learning.start());
  app.addHook('onClose', async () => learning.stop());
  tools.onChange((row) => {
    catalogStats.invalidate(row.tenantId);
    indexer?.notify();
  });
  app.decorate('indexer', indexer);
  // PGlite has no autovacuum: without statistics the planner misplans every discovery.
  if (deps.database.kind === 'pglite') {
    const maintenance = new TableMaintenance(db, app.log);
    app.addHook('onReady', async () => maintenance.start());
    app.addHook('preClose', async () => maintenance.stop());
  }
  if (indexer) {
    app.addHook('onReady', async () => indexer.start());
    app.addHook('preClose', async () => indexer.stop());
  }

  await app.register(healthRoutes, {
    checks: { embedder: () => (indexer ? (indexer.status === 'ok' ? 'ok' : `degraded: ${indexer.status}`) : 'disabled') },
  });
  await app.register(async (api) => {
    api.addHook('onRequest', api.authenticate);
    await api.register(toolRoutes, { tools, learning, limits: deps.config.limits });
    await api.register(discoveryRoutes, { discovery });
    await api.register(authorizeRoutes, { authorize });
    await api.register(auditRoutes);
    await api.register(learningRoutes, { learning });
  });
  await app.register(mcpRoutes, { discovery, tools });
  await app.register(uiRoutes);
  return app;
}
