import type { FastifyBaseLogger } from 'fastify';

import { AuditService } from './audit/service.js';
import { AuthorizeService, type Decision } from './authorize/service.js';
import { BackgroundJob } from './background-job.js';
import { CatalogSync } from './catalog/service.js';
import type { Config } from './config.js';
import type { Database, Executor } from './db/client.js';
import { CatalogStatsCache } from './discovery/catalog-cache.js';
import { DiscoveryReport } from './discovery/log-report.js';
import { DiscoveryLogWriter } from './discovery/log-writer.js';
import { type DiscoveryOptions, DiscoveryService } from './discovery/service.js';
import { ShortlistCache } from './discovery/shortlist-cache.js';
import { ShortlistQuality } from './discovery/shortlist-quality.js';
import { MAINTENANCE_INTERVAL_MS, TableMaintenance } from './discovery/table-maintenance.js';
import { DEFAULT_INDEXER_OPTIONS, EmbeddingIndexer } from './embedding/indexer.js';
import type { Embedder } from './embedding/provider.js';
import { QueryEmbeddings } from './embedding/query-cache.js';
import { updateLearnedText } from './learning/repository.js';
import { LearningService } from './learning/service.js';
import { LogRetention } from './retention/log-retention.js';
import { SettingsService } from './settings/service.js';
import { TERM_COUNTS_INTERVAL_MS, TermCountRefresh } from './tools/lexical/term-counts.js';
import { ToolService } from './tools/service.js';
import { TokenCostBackfill } from './tools/token-backfill.js';
import { ToolValidator } from './tools/validation.js';
import { type CallOutcome, CallService } from './upstreams/call.js';
import { UpstreamClients } from './upstreams/client.js';
import { type HeaderSealer, resolveSealer } from './upstreams/secrets.js';
import { UpstreamService } from './upstreams/service.js';
import { UpstreamSync } from './upstreams/sync.js';

/** What the services are built over; the caller opens (and migrates) the database. */
export interface ServiceDependencies {
  database: Database;
  /** Where reads that may lag a little go (the read replica); default: the primary. */
  reads?: Executor;
  /** The same, as a tenant makes them (its turn for a connection); default: the primary as the tenant. */
  readsAs?: (tenant: string) => Executor;
  /** The loaded embedder; absent means lexical-only discovery (EMBEDDING_PROVIDER=none). */
  embedder?: Embedder;
  log: Pick<FastifyBaseLogger, 'info' | 'warn' | 'debug'>;
  /** Each call forwarded to an upstream MCP server (metrics). */
  onUpstreamCall?: (outcome: CallOutcome, seconds: number) => void;
  /** Each discovery's per-stage timings (metrics). */
  onDiscoveryTimings?: DiscoveryOptions['onTimings'];
  /** Each authorize decision (metrics). */
  onAuthorizeDecision?: (decision: Decision) => void;
}

/** The application's services, wired together once. */
export interface Services {
  tools: ToolService;
  discovery: DiscoveryService;
  discoveryLog: DiscoveryLogWriter;
  /** Empty and low-confidence shortlists, counted on their way to the discovery log (metrics). */
  shortlistQuality: ShortlistQuality;
  discoveryReport: DiscoveryReport;
  authorize: AuthorizeService;
  learning: LearningService;
  audit: AuditService;
  settings: SettingsService;
  /** Declarative catalog sync (POST /v1/catalog/sync). */
  catalog: CatalogSync;
  /** Upstream MCP servers (the gateway) and calls through the registry. */
  upstreams: UpstreamService;
  calls: CallService;
  /** Background vector maintenance; undefined without an embedder. */
  indexer: EmbeddingIndexer | undefined;
  queryEmbeddings: QueryEmbeddings | undefined;
  shortlists: ShortlistCache;
  /** Periodic and start-up work: started when the app is ready, stopped before it closes. */
  jobs: BackgroundJob[];
}

const HOUR = 60 * 60 * 1000;

/**
 * The composition root: every service built and wired from the config, the same way for the app,
 * the CLI commands and the scripts. Writes, authorize and a publisher's reads of its own tools stay
 * on the primary; reads that may lag go to `reads` (docs/operations.md, "Read replicas and consistency").
 */
export function createServices(config: Config, deps: ServiceDependencies): Services {
  const { database, embedder, log } = deps;
  const { db } = database;
  const reads = deps.reads ?? db;
  // A tenant's reads and writes wait for a connection in its turn (src/db/pool-turns.ts).
  const readsAs = deps.readsAs ?? (deps.reads ? () => reads : database.as);
  const indexer = embedder
    ? new EmbeddingIndexer(db, embedder, log, {
        ...DEFAULT_INDEXER_OPTIONS,
        indexBuild: { concurrently: database.concurrentIndexBuild, withSession: database.withSession, maxMemoryMb: config.embedding.vectorIndexBuildMemoryMb },
        vectorIndexMinTools: config.embedding.vectorIndexMinTools,
      })
    : undefined;
  const reindex = () => indexer?.notify();
  // A new version may change whether its learned aliases need approval: re-apply the rule.
  const settings = new SettingsService(db);
  const tools = new ToolService(db, {
    writesAs: database.as,
    readsAs,
    onRewrite: async (tx, row) => void (await updateLearnedText(tx, row.id, config.learning)),
    warningsAsErrors: (executor, tenantId) => settings.warningsAsErrors(executor, tenantId),
  });
  // Catalog statistics need no notice: they are checked against the tenant's catalog revision.
  tools.onChange(reindex);
  const queryEmbeddings = embedder ? new QueryEmbeddings(embedder, config.embedding.timeoutMs) : undefined;
  const discoveryLog = new DiscoveryLogWriter(db, log);
  const shortlists = new ShortlistCache(config.discovery.cache);
  const shortlistQuality = new ShortlistQuality(discoveryLog);
  const discovery = new DiscoveryService(db, queryEmbeddings, new CatalogStatsCache(), {
    log: shortlistQuality,
    vectorIndexMinTools: config.embedding.vectorIndexMinTools,
    readsAs,
    scoreFloors: config.discovery,
    shortlists,
    onTimings: deps.onDiscoveryTimings,
  });
  const learning = new LearningService(db, { ...config.learning, defaultMode: embedder ? 'hybrid' : 'lexical', auditLogDays: config.retention.auditLogDays }, reindex, reads);
  const authorize = new AuthorizeService(db, learning, deps.onAuthorizeDecision, reindex, discoveryLog);

  const upstreams = gateway(config, deps, tools);
  const calls = new CallService(db, authorize, upstreams, deps.onUpstreamCall, config.upstreams.maxCallsInFlight);

  const failed = (message: string) => (error: unknown) => log.warn({ err: error }, message);
  const jobs = [
    new BackgroundJob((signal) => learning.expire(signal), { atStart: false, everyMs: HOUR }, failed('ageing learned aliases failed')),
    // Hourly too: a pass that failed at start (a statement cancelled on a busy database) is retried,
    // and one that finds nothing stale is a single read.
    new BackgroundJob((signal) => new TokenCostBackfill(db, log).run(signal), { atStart: true, everyMs: HOUR }, failed('re-pricing stored tools failed; retrying in an hour')),
  ];
  const termCounts = new TermCountRefresh(db, log);
  jobs.push(new BackgroundJob((signal) => termCounts.runOnce(signal), { atStart: true, everyMs: TERM_COUNTS_INTERVAL_MS }, failed('storing term counts failed; retrying later')));
  const retention = new LogRetention(
    db,
    [
      { table: 'discovery_log', days: config.retention.discoveryLogDays },
      { table: 'audit_log', days: config.retention.auditLogDays },
    ],
    log,
  );
  if (retention.enabled) jobs.push(new BackgroundJob((signal) => retention.runOnce(signal), { atStart: true, everyMs: HOUR }, failed('deleting log rows past their retention failed; retrying in an hour')));
  if (config.upstreams.syncIntervalMs > 0) {
    jobs.push(new BackgroundJob((signal) => upstreams.syncAll(signal), { atStart: false, everyMs: config.upstreams.syncIntervalMs }, failed('syncing upstream MCP servers failed; retrying later')));
  }
  // PGlite has no autovacuum: without statistics the planner misplans every discovery.
  if (database.kind === 'pglite') {
    const maintenance = new TableMaintenance(db, log);
    jobs.push(new BackgroundJob((signal) => maintenance.runOnce(signal), { atStart: true, everyMs: MAINTENANCE_INTERVAL_MS }, failed('table maintenance failed; retrying later')));
  }

  return {
    tools,
    discovery,
    discoveryLog,
    shortlistQuality,
    discoveryReport: new DiscoveryReport(reads, discoveryLog),
    authorize,
    learning,
    audit: new AuditService(reads),
    settings,
    catalog: new CatalogSync(db, tools, new ToolValidator(config.limits), config.limits.bodyBytes, log),
    upstreams,
    calls,
    indexer,
    queryEmbeddings,
    shortlists,
    jobs,
  };
}

/** The gateway's upstreams: sessions that report list_changed back to the service that syncs them. */
function gateway(config: Config, deps: ServiceDependencies, tools: ToolService): UpstreamService {
  let sealer: HeaderSealer | undefined;
  // Resolved on first use: a development key is created in DATA_DIR only once headers are stored.
  const sealerOnce = () => (sealer ??= resolveSealer(config));
  const sync = new UpstreamSync(deps.database.db, tools, new ToolValidator(config.limits), config.limits.descriptionLength);
  // The sessions are built before the service they report to.
  const late: { service?: UpstreamService } = {};
  const clients = new UpstreamClients(config.upstreams, (target) => late.service?.toolsChanged(target));
  late.service = new UpstreamService(deps.database.db, tools, sync, clients, sealerOnce, config.upstreams, deps.log);
  return late.service;
}
