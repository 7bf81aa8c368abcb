import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';

import Fastify, { type FastifyBaseLogger, type FastifyHttpOptions, type FastifyInstance, type FastifyReply } from 'fastify';

import auditRoutes from './audit/routes.js';
import { AuditService } from './audit/service.js';
import authPlugin from './auth/plugin.js';
import authorizeRoutes from './authorize/routes.js';
import { AuthorizeService } from './authorize/service.js';
import type { TokenVerifier } from './auth/verifier.js';
import type { Config } from './config.js';
import type { Database } from './db/client.js';
import databasePlugin from './db/plugin.js';
import type { ReadReplica } from './db/read-replica.js';
import { CatalogStatsCache } from './discovery/catalog-cache.js';
import { DiscoveryReport } from './discovery/log-report.js';
import discoveryRoutes from './discovery/routes.js';
import { DiscoveryLogWriter } from './discovery/log-writer.js';
import { DiscoveryService } from './discovery/service.js';
import { TableMaintenance } from './discovery/table-maintenance.js';
import { DEFAULT_INDEXER_OPTIONS, EmbeddingIndexer } from './embedding/indexer.js';
import type { Embedder } from './embedding/provider.js';
import { indexStatus } from './embedding/repository.js';
import { QueryEmbeddings } from './embedding/query-cache.js';
import { capConnectionsPerClient } from './http/connection-cap.js';
import cors from './http/cors.js';
import errorHandler, { type ErrorBody } from './http/error-handler.js';
import healthRoutes from './http/health-routes.js';
import openapi from './http/openapi.js';
import principalRateLimit from './http/rate-limit.js';
import resourceMetadataRoutes from './mcp/resource-metadata.js';
import mcpRoutes from './mcp/routes.js';
import metricsPlugin from './metrics/plugin.js';
import { updateLearnedText } from './learning/repository.js';
import learningRoutes from './learning/routes.js';
import { LearningService } from './learning/service.js';
import { learnedAliasView } from './learning/views.js';
import toolRoutes from './tools/routes.js';
import { ToolService } from './tools/service.js';
import { TokenCostBackfill } from './tools/token-backfill.js';
import uiRoutes from './ui/plugin.js';
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

/** Builds the application (never listens): plugins in tiers, then encapsulated routes. */
export async function buildApp(deps: AppDependencies, logger?: FastifyBaseLogger): Promise<FastifyInstance> {
  const app = Fastify(fastifyOptions(deps.config, logger));
  capConnectionsPerClient(app.server, deps.config.limits.connectionsPerClient);
  // The API speaks JSON only: any other body type is a 415, not a string handed to a handler.
  app.removeContentTypeParser('text/plain');
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  await app.register(errorHandler);
  await app.register(openapi, { version: VERSION });
  await app.register(metricsPlugin, { token: deps.config.metricsToken });
  await app.register(databasePlugin, { database: deps.database, readReplica: deps.readReplica, owned: deps.ownsDatabase });
  await app.register(authPlugin, { verify: deps.verify });
  await app.register(cors, { origins: deps.config.cors.origins });
  // Before every route it limits (discover, authorize, mcp): it tags them as they are added.
  await app.register(principalRateLimit, { limits: deps.config.rateLimit });

  const { db } = deps.database;
  // Reads that may lag a little go to the replica (app.reads); writes, authorize and a publisher's
  // reads of its own tools stay on the primary (README, "Read replicas and consistency").
  // A new version may change whether its learned aliases need approval: re-apply the rule.
  const tools = new ToolService(db, app.reads, async (tx, row) => void (await updateLearnedText(tx, row.id, deps.config.learning)));
  const catalogStats = new CatalogStatsCache();
  const indexer = deps.embedder
    ? new EmbeddingIndexer(db, deps.embedder, app.log, {
        ...DEFAULT_INDEXER_OPTIONS,
        concurrentIndexBuild: deps.database.kind === 'postgres',
        vectorIndexMinTools: deps.config.embedding.vectorIndexMinTools,
      })
    : undefined;
  const queryEmbeddings = deps.embedder ? new QueryEmbeddings(deps.embedder, deps.config.embedding.timeoutMs) : undefined;
  const discoveryLog = new DiscoveryLogWriter(db, app.log);
  app.metrics.trackDiscoveryLog(discoveryLog.stats);
  // Registered after the database plugin, so it runs before the database closes: nothing buffered is lost.
  app.addHook('onClose', async () => discoveryLog.flush());
  const discovery = new DiscoveryService(db, queryEmbeddings, catalogStats, {
    log: discoveryLog,
    vectorIndexMinTools: deps.config.embedding.vectorIndexMinTools,
    reads: app.reads,
    scoreFloors: deps.config.discovery,
    onTimings: (timings, mode, vectorSearch) => app.metrics.observeDiscovery(timings, mode, vectorSearch),
  });
  if (queryEmbeddings) app.metrics.trackQueryEmbeddings(queryEmbeddings.stats);
  const encoder = deps.embedder;
  if (encoder?.counters) app.metrics.trackEncoder(() => encoder.counters!());
  if (deps.database.pool) app.metrics.trackPool(deps.database.pool);
  if (deps.readReplica) app.metrics.trackReadReplica(deps.readReplica);
  const learning = new LearningService(
    db,
    { ...deps.config.learning, defaultMode: deps.embedder ? 'hybrid' : 'lexical' },
    app.log,
    () => indexer?.notify(),
    app.reads,
  );
  const authorize = new AuthorizeService(
    db,
    learning,
    (decision) => app.metrics.recordAuthorizeDecision(decision.decision, decision.reasons[0]?.code),
    () => indexer?.notify(),
    discoveryLog,
  );
  app.addHook('onReady', async () => learning.start());
  const tokenBackfill = new TokenCostBackfill(db, app.log);
  app.addHook('onReady', async () => tokenBackfill.start());
  app.addHook('preClose', async () => tokenBackfill.stop());
  app.addHook('onClose', async () => learning.stop());
  // Catalog statistics need no notice: they are checked against the tenant's catalog revision.
  tools.onChange(() => indexer?.notify());
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
    const embedder = deps.embedder;
    // Without an embedder there are no vectors to wait for: the lexical index is written with the tool.
    const toolIndexStatus = embedder ? (toolId: number) => indexStatus(db, toolId, embedder.model) : async () => 'indexed' as const;
    const learnedAliases = async (toolId: number) => (await learning.listFor(toolId)).map(learnedAliasView);
    await api.register(toolRoutes, { tools, learnedAliases, limits: deps.config.limits, indexStatus: toolIndexStatus });
    await api.register(discoveryRoutes, { discovery, report: new DiscoveryReport(app.reads, discoveryLog) });
    await api.register(authorizeRoutes, { authorize });
    await api.register(auditRoutes, { audit: new AuditService(app.reads) });
    await api.register(learningRoutes, { learning });
  });
  await app.register(mcpRoutes, { discovery, tools, oauth: deps.config.oauth });
  await app.register(resourceMetadataRoutes, { oauth: deps.config.oauth });
  await app.register(uiRoutes);
  return app;
}
