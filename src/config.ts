import { type Static, Type } from 'typebox';
import { Compile } from 'typebox/compile';

/**
 * Environment variables, validated once at boot. Names marked (contract) in docs/configuration.md keep their names;
 * the others extend it; every variable is documented there.
 */
/**
 * Score floors of discovery (calibrated probabilities that a tool fits; the measurements behind
 * them are in docs/ranking.md): tools under minScore leave the shortlist, a best score under
 * lowConfidenceScore flags it.
 */
export const DISCOVERY_SCORE_DEFAULTS = { minScore: 0.02, lowConfidenceScore: 0.1 } as const;

/** OTEL_TRACES_SAMPLER values (the specification's built-in samplers). */
export const TRACE_SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

export const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ default: '0.0.0.0' }),
  DATABASE_URL: Type.Optional(Type.String({ minLength: 1 })),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  DATABASE_READ_URL: Type.Optional(Type.String({ minLength: 1 })),
  DATABASE_READ_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  // Longest one statement of the service may run on PostgreSQL before the server cancels it; 0: no bound.
  DATABASE_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 30_000 }),
  // Reads go to the primary while the replica is further behind than this (0: never by lag).
  DATABASE_READ_MAX_LAG_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 5000 }),
  DATABASE_READ_CHECK_INTERVAL_MS: Type.Integer({ minimum: 50, maximum: 60_000, default: 1000 }),
  JWT_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  JWT_PUBLIC_KEY: Type.Optional(Type.String({ minLength: 1 })),
  JWKS_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  JWT_ISSUER: Type.Optional(Type.String({ minLength: 1 })),
  JWT_AUDIENCE: Type.Optional(Type.String({ minLength: 1 })),
  JWT_CLOCK_TOLERANCE_SECONDS: Type.Integer({ minimum: 0, maximum: 300, default: 30 }),
  TENANT_CLAIM: Type.String({ minLength: 1, default: 'tenant_id' }),
  SCOPE_CLAIM: Type.String({ minLength: 1, default: 'scope' }),
  EMBEDDING_PROVIDER: Type.Union([Type.Literal('local'), Type.Literal('openai'), Type.Literal('none')], { default: 'local' }),
  EMBEDDING_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  EMBEDDING_MODEL: Type.Optional(Type.String({ minLength: 1 })),
  EMBEDDING_API_KEY: Type.Optional(Type.String({ minLength: 1 })),
  EMBEDDING_TIMEOUT_MS: Type.Integer({ minimum: 50, maximum: 60000, default: 2000 }),
  // Local encoder: worker threads for indexing (queries have their own), and the text length it encodes.
  EMBEDDING_LOCAL_THREADS: Type.Integer({ minimum: 1, maximum: 16, default: 1 }),
  EMBEDDING_LOCAL_MAX_CHARS: Type.Integer({ minimum: 64, maximum: 100000, default: 512 }),
  VECTOR_INDEX_MIN_TOOLS: Type.Integer({ minimum: 0, maximum: 100000000, default: 1000 }),
  // The most maintenance_work_mem an HNSW build asks for (sized to the catalog up to this).
  VECTOR_INDEX_BUILD_MEMORY_MB: Type.Integer({ minimum: 64, maximum: 65536, default: 1024 }),
  // Calibrated discovery scores (probability that a tool fits): tools under the minimum leave the
  // shortlist; a best score under the low-confidence floor flags it.
  DISCOVERY_MIN_SCORE: Type.Number({ minimum: 0, maximum: 1, default: DISCOVERY_SCORE_DEFAULTS.minScore }),
  DISCOVERY_LOW_CONFIDENCE_SCORE: Type.Number({ minimum: 0, maximum: 1, default: DISCOVERY_SCORE_DEFAULTS.lowConfidenceScore }),
  // Whole shortlists cached per replica (tenant, scope set, request), served only at the catalog
  // revision they were computed at; the TTL bounds how stale the popularity prior may be. 0 MB: off.
  DISCOVERY_CACHE_MB: Type.Number({ minimum: 0, maximum: 16384, default: 32 }),
  DISCOVERY_CACHE_TTL_MS: Type.Integer({ minimum: 1, maximum: 86_400_000, default: 60_000 }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
  // OpenTelemetry traces (docs/operations.md, "Traces"): the standard OTEL_* variables; tracing is
  // off (no SDK loaded) unless an OTLP endpoint is set and neither OTEL_SDK_DISABLED nor
  // OTEL_TRACES_EXPORTER=none turns it off.
  OTEL_SDK_DISABLED: Type.Boolean({ default: false }),
  OTEL_TRACES_EXPORTER: Type.Union([Type.Literal('otlp'), Type.Literal('none')], { default: 'otlp' }),
  OTEL_EXPORTER_OTLP_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: Type.Optional(Type.String({ pattern: '^https?://' })),
  OTEL_EXPORTER_OTLP_PROTOCOL: Type.Optional(Type.String({ minLength: 1 })),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: Type.Optional(Type.String({ minLength: 1 })),
  OTEL_EXPORTER_OTLP_HEADERS: Type.Optional(Type.String({ minLength: 1, maxLength: 8000 })),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: Type.Optional(Type.String({ minLength: 1, maxLength: 8000 })),
  OTEL_EXPORTER_OTLP_TIMEOUT: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: Type.Optional(Type.Integer({ minimum: 1, maximum: 600_000 })),
  OTEL_SERVICE_NAME: Type.String({ minLength: 1, maxLength: 256, default: 'tool-registry' }),
  OTEL_RESOURCE_ATTRIBUTES: Type.Optional(Type.String({ minLength: 1, maxLength: 8000 })),
  OTEL_TRACES_SAMPLER: Type.Union(
    TRACE_SAMPLERS.map((sampler) => Type.Literal(sampler)),
    { default: 'parentbased_always_on' },
  ),
  OTEL_TRACES_SAMPLER_ARG: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, maximum: 16 * 1024 * 1024, default: 256 * 1024 }),
  // POST /v1/catalog/sync carries a whole catalog: its own limit (5,000 real tools are ~12 MB).
  CATALOG_SYNC_MAX_BYTES: Type.Integer({ minimum: 1024, maximum: 512 * 1024 * 1024, default: 32 * 1024 * 1024 }),
  MAX_DESCRIPTION_LENGTH: Type.Integer({ minimum: 16, maximum: 100000, default: 1024 }),
  MAX_SUMMARY_LENGTH: Type.Integer({ minimum: 16, maximum: 10000, default: 200 }),
  MAX_SCHEMA_DEPTH: Type.Integer({ minimum: 2, maximum: 256, default: 32 }),
  // A request must arrive whole within REQUEST_TIMEOUT_MS and its headers within HEADERS_TIMEOUT_MS
  // (slow-loris); connections per client address are capped (0: no cap, e.g. behind a proxy that caps).
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 600000, default: 30000 }),
  HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 1000, maximum: 600000, default: 10000 }),
  MAX_CONNECTIONS_PER_CLIENT: Type.Integer({ minimum: 0, maximum: 100000, default: 128 }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 600000, default: 10000 }),
  LEARNING_ENABLED: Type.Boolean({ default: true }),
  // Distinct subjects who must teach a learned alias before it ranks (docs/api.md, "Learning from calls").
  LEARNED_ALIAS_MIN_SUBJECTS: Type.Integer({ minimum: 2, maximum: 1000, default: 3 }),
  LEARNED_ALIAS_VOTES_PER_HOUR: Type.Integer({ minimum: 1, maximum: 100000, default: 20 }),
  LEARNED_ALIAS_MAX_PER_TOOL: Type.Integer({ minimum: 1, maximum: 200, default: 20 }),
  LEARNED_ALIAS_TTL_DAYS: Type.Integer({ minimum: 1, maximum: 3650, default: 30 }),
  // Days a discovery log entry / an audit record is kept; 0 keeps them for good (docs/operations.md, "Log retention").
  DISCOVERY_LOG_RETENTION_DAYS: Type.Integer({ minimum: 0, maximum: 36_500, default: 30 }),
  AUDIT_LOG_RETENTION_DAYS: Type.Integer({ minimum: 0, maximum: 36_500, default: 0 }),
  // Requests per minute per principal (tenant + subject) and replica; 0 disables the limit.
  RATE_LIMIT_DISCOVER_PER_MINUTE: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 600 }),
  RATE_LIMIT_AUTHORIZE_PER_MINUTE: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 3000 }),
  RATE_LIMIT_MCP_PER_MINUTE: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 1200 }),
  RATE_LIMIT_PUBLISH_PER_MINUTE: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 600 }),
  // Bearer token GET /metrics requires; unset: /metrics is public (the contract's default).
  METRICS_TOKEN: Type.Optional(Type.String({ minLength: 16, maxLength: 512, pattern: '^[\\x21-\\x7E]+$' })),
  // Comma-separated browser origins allowed by CORS ('*' for any); unset: same-origin only.
  CORS_ORIGINS: Type.Optional(Type.String({ minLength: 1, maxLength: 4000 })),
  // The service's external base URL (behind a proxy); unset: taken from each request's Host.
  PUBLIC_URL: Type.Optional(Type.String({ pattern: '^https?://[^\\s?#]+$' })),
  // Comma-separated OAuth authorization servers that issue tokens for this service (RFC 9728).
  OAUTH_AUTHORIZATION_SERVERS: Type.Optional(Type.String({ minLength: 1, maxLength: 4000 })),
  // The MCP gateway (docs/gateway.md): comma-separated URL prefixes an upstream URL must start with
  // (unset: no upstream may be registered), the AES-256 key sealing upstream headers (32 bytes,
  // base64 or hex; unset on the embedded database: a key kept in DATA_DIR), the sync interval
  // (0: only on registration, on request and on list_changed), timeouts and the response cap.
  UPSTREAM_ALLOWED_URLS: Type.Optional(Type.String({ minLength: 1, maxLength: 8000 })),
  UPSTREAM_SECRET_KEY: Type.Optional(Type.String({ pattern: '^([0-9a-fA-F]{64}|[A-Za-z0-9+/_-]{43}=?)$' })),
  UPSTREAM_SYNC_INTERVAL_MS: Type.Integer({ minimum: 0, maximum: 86_400_000, default: 300_000 }),
  UPSTREAM_CONNECT_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 120_000, default: 10_000 }),
  UPSTREAM_CALL_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 600_000, default: 30_000 }),
  UPSTREAM_MAX_RESPONSE_BYTES: Type.Integer({ minimum: 1024, maximum: 256 * 1024 * 1024, default: 4 * 1024 * 1024 }),
  UPSTREAM_MAX_CALLS_IN_FLIGHT: Type.Integer({ minimum: 1, maximum: 10_000, default: 32 }),
});

export type Env = Static<typeof EnvSchema>;

/** The service's typed configuration. */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /** Connections of the node-postgres pool (external PostgreSQL only). */
  databasePoolSize: number;
  /**
   * How long one statement may run on PostgreSQL (and its read replica) before the server cancels
   * it, so a slow statement cannot hold a pooled connection for good; 0: unbounded. Migrations and
   * index builds are exempt; PGlite cannot interrupt a statement and ignores it.
   */
  databaseStatementTimeoutMs: number;
  /** A streaming replica of DATABASE_URL serving discovery and other reads; absent: the primary serves them. */
  readReplica: ReadReplicaConfig | undefined;
  dataDir: string;
  jwt: {
    secret: string | undefined;
    publicKey: string | undefined;
    jwksUrl: string | undefined;
    issuer: string | undefined;
    audience: string | undefined;
    clockToleranceSeconds: number;
    tenantClaim: string;
    scopeClaim: string;
  };
  embedding: {
    provider: 'local' | 'openai' | 'none';
    url: string | undefined;
    model: string | undefined;
    apiKey: string | undefined;
    timeoutMs: number;
    /** Local encoder: indexing worker threads (one more serves queries). */
    localThreads: number;
    /** Local encoder: texts are cut to this many characters (its cost grows with length). */
    localMaxChars: number;
    /** Callers seeing at least this many tools are searched through the HNSW index; fewer, exactly. */
    vectorIndexMinTools: number;
    /** The most maintenance_work_mem, MiB, an HNSW index build asks for (sized to the catalog). */
    vectorIndexBuildMemoryMb: number;
  };
  /** Score floors of discovery (calibrated probabilities, 0..1), and its shortlist cache. */
  discovery: { minScore: number; lowConfidenceScore: number; cache: { maxBytes: number; ttlMs: number } };
  logLevel: string;
  limits: {
    bodyBytes: number;
    /** The body limit of POST /v1/catalog/sync (each tool in it still within bodyBytes). */
    catalogSyncBytes: number;
    descriptionLength: number;
    summaryLength: number;
    schemaDepth: number;
    requestTimeoutMs: number;
    headersTimeoutMs: number;
    /** Open connections per client address; 0: unlimited. */
    connectionsPerClient: number;
  };
  shutdownTimeoutMs: number;
  learning: {
    enabled: boolean;
    /** Distinct subjects whose misses of the same query make it an alias. */
    minSubjects: number;
    maxPerTool: number;
    ttlDays: number;
    /** Misses one subject may teach per hour in a tenant (bounds learning work per principal). */
    votesPerHour: number;
  };
  /** Days the discovery log and the audit log keep a row; 0: for good. */
  retention: { discoveryLogDays: number; auditLogDays: number };
  /** Requests per minute per principal and replica; 0 means unlimited. */
  rateLimit: { discoverPerMinute: number; authorizePerMinute: number; mcpPerMinute: number; publishPerMinute: number };
  /** Origins allowed by CORS: empty means same-origin only, ['*'] any origin. */
  cors: { origins: string[] };
  /** Bearer token required by GET /metrics; undefined: public. */
  metricsToken: string | undefined;
  /** OAuth protected-resource metadata (RFC 9728) for MCP clients. */
  oauth: {
    /** External base URL without a trailing slash; undefined: derived from the request. */
    publicUrl: string | undefined;
    /** Issuers of tokens for this service: OAUTH_AUTHORIZATION_SERVERS, else JWT_ISSUER when it is a URL. */
    authorizationServers: string[];
  };
  /** The MCP gateway: upstream MCP servers and calls through the registry. */
  upstreams: UpstreamConfig;
  /** OpenTelemetry traces; undefined: off, no SDK is loaded. */
  tracing: TracingConfig | undefined;
}

/** OpenTelemetry traces exported over OTLP/HTTP (docs/operations.md, "Traces"). */
export interface TracingConfig {
  /** The full traces URL (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces). */
  endpoint: string;
  protocol: 'http/protobuf' | 'http/json';
  /** Sent with every export (an API key of the collector, for one): never logged. */
  headers: Record<string, string>;
  timeoutMs: number;
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES; service.name comes from serviceName. */
  resourceAttributes: Record<string, string>;
  sampler: (typeof TRACE_SAMPLERS)[number];
  /** The ratio of the traceidratio samplers, 0..1. */
  samplerRatio: number;
}

/** Upstream MCP servers (docs/gateway.md). */
export interface UpstreamConfig {
  /** URL prefixes an upstream must match (normalized by URL parsing); empty: none may be registered. */
  allowedUrls: string[];
  /** The 32-byte key sealing upstream headers; undefined: the development key in DATA_DIR, if any. */
  secretKey: Buffer | undefined;
  /** Every upstream is re-synced this often; 0: never by timer. */
  syncIntervalMs: number;
  /** Connecting (initialize) and listing tools. */
  connectTimeoutMs: number;
  /** One tools/call. */
  callTimeoutMs: number;
  /** The largest response body read from an upstream (a tools/call result, a tools/list page). */
  maxResponseBytes: number;
  /** Calls forwarded to upstreams that one tenant may have running at once, per replica (429 beyond). */
  maxCallsInFlight: number;
}

/** The read replica (DATABASE_READ_URL) and how it is watched. */
export interface ReadReplicaConfig {
  url: string;
  poolSize: number;
  /** As the primary's (Config.databaseStatementTimeoutMs). */
  statementTimeoutMs: number;
  /** Replication lag beyond which reads go to the primary; 0 disables the rule. */
  maxLagMs: number;
  /** How often the replica's reachability, recovery state and lag are checked. */
  checkIntervalMs: number;
}

const envValidator = Compile(EnvSchema);

/** Thrown when the environment does not describe a startable service. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Reads and validates configuration from an environment map (process.env by default).
 * Empty strings count as unset so `FOO=` in a compose file does not turn into a bad value.
 */
export function loadConfig(source: NodeJS.ProcessEnv = process.env): Config {
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = source[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const candidate = envValidator.Default(envValidator.Convert(raw));
  if (!envValidator.Check(candidate)) {
    const problems = envValidator.Errors(candidate).map((e) => `${e.instancePath.slice(1) || 'environment'}: ${e.message}`);
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  return toConfig(candidate);
}

function toConfig(env: Env): Config {
  const asymmetric = env.JWT_PUBLIC_KEY !== undefined || env.JWKS_URL !== undefined;
  if (env.JWT_SECRET !== undefined && asymmetric) {
    throw new ConfigError('JWT_SECRET cannot be combined with JWT_PUBLIC_KEY or JWKS_URL: HS256 is never accepted when an asymmetric key is configured');
  }
  if (env.JWT_PUBLIC_KEY !== undefined && env.JWKS_URL !== undefined) {
    throw new ConfigError('set either JWT_PUBLIC_KEY or JWKS_URL, not both');
  }
  if (env.EMBEDDING_PROVIDER === 'openai' && (env.EMBEDDING_URL === undefined || env.EMBEDDING_MODEL === undefined)) {
    throw new ConfigError('EMBEDDING_PROVIDER=openai needs EMBEDDING_URL and EMBEDDING_MODEL');
  }
  if (env.DATABASE_READ_URL !== undefined && env.DATABASE_URL === undefined) {
    throw new ConfigError('DATABASE_READ_URL needs DATABASE_URL: a read replica serves reads of an external PostgreSQL primary, never of the embedded database');
  }
  if (env.DATABASE_READ_MAX_LAG_MS > 0 && env.DATABASE_READ_MAX_LAG_MS < 2 * env.DATABASE_READ_CHECK_INTERVAL_MS) {
    throw new ConfigError('DATABASE_READ_MAX_LAG_MS must be 0 (no lag rule) or at least twice DATABASE_READ_CHECK_INTERVAL_MS: lag is measured in steps of one check interval');
  }
  return {
    port: env.PORT,
    host: env.HOST,
    databaseUrl: env.DATABASE_URL,
    databasePoolSize: env.DATABASE_POOL_SIZE,
    databaseStatementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
    readReplica:
      env.DATABASE_READ_URL === undefined
        ? undefined
        : {
            url: env.DATABASE_READ_URL,
            poolSize: env.DATABASE_READ_POOL_SIZE,
            statementTimeoutMs: env.DATABASE_STATEMENT_TIMEOUT_MS,
            maxLagMs: env.DATABASE_READ_MAX_LAG_MS,
            checkIntervalMs: env.DATABASE_READ_CHECK_INTERVAL_MS,
          },
    dataDir: env.DATA_DIR,
    jwt: {
      secret: env.JWT_SECRET,
      publicKey: env.JWT_PUBLIC_KEY?.replace(/\\n/g, '\n'),
      jwksUrl: env.JWKS_URL,
      issuer: env.JWT_ISSUER,
      audience: env.JWT_AUDIENCE,
      clockToleranceSeconds: env.JWT_CLOCK_TOLERANCE_SECONDS,
      tenantClaim: env.TENANT_CLAIM,
      scopeClaim: env.SCOPE_CLAIM,
    },
    embedding: {
      provider: env.EMBEDDING_PROVIDER,
      url: env.EMBEDDING_URL,
      model: env.EMBEDDING_MODEL,
      apiKey: env.EMBEDDING_API_KEY,
      timeoutMs: env.EMBEDDING_TIMEOUT_MS,
      localThreads: env.EMBEDDING_LOCAL_THREADS,
      localMaxChars: env.EMBEDDING_LOCAL_MAX_CHARS,
      vectorIndexMinTools: env.VECTOR_INDEX_MIN_TOOLS,
      vectorIndexBuildMemoryMb: env.VECTOR_INDEX_BUILD_MEMORY_MB,
    },
    discovery: {
      minScore: env.DISCOVERY_MIN_SCORE,
      lowConfidenceScore: env.DISCOVERY_LOW_CONFIDENCE_SCORE,
      cache: { maxBytes: Math.round(env.DISCOVERY_CACHE_MB * 1024 * 1024), ttlMs: env.DISCOVERY_CACHE_TTL_MS },
    },
    logLevel: env.LOG_LEVEL,
    limits: {
      bodyBytes: env.BODY_LIMIT_BYTES,
      catalogSyncBytes: env.CATALOG_SYNC_MAX_BYTES,
      descriptionLength: env.MAX_DESCRIPTION_LENGTH,
      summaryLength: env.MAX_SUMMARY_LENGTH,
      schemaDepth: env.MAX_SCHEMA_DEPTH,
      requestTimeoutMs: env.REQUEST_TIMEOUT_MS,
      // Node requires headers to be due no later than the whole request.
      headersTimeoutMs: Math.min(env.HEADERS_TIMEOUT_MS, env.REQUEST_TIMEOUT_MS),
      connectionsPerClient: env.MAX_CONNECTIONS_PER_CLIENT,
    },
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
    learning: {
      enabled: env.LEARNING_ENABLED,
      minSubjects: env.LEARNED_ALIAS_MIN_SUBJECTS,
      maxPerTool: env.LEARNED_ALIAS_MAX_PER_TOOL,
      ttlDays: env.LEARNED_ALIAS_TTL_DAYS,
      votesPerHour: env.LEARNED_ALIAS_VOTES_PER_HOUR,
    },
    retention: { discoveryLogDays: env.DISCOVERY_LOG_RETENTION_DAYS, auditLogDays: env.AUDIT_LOG_RETENTION_DAYS },
    rateLimit: {
      discoverPerMinute: env.RATE_LIMIT_DISCOVER_PER_MINUTE,
      authorizePerMinute: env.RATE_LIMIT_AUTHORIZE_PER_MINUTE,
      mcpPerMinute: env.RATE_LIMIT_MCP_PER_MINUTE,
      publishPerMinute: env.RATE_LIMIT_PUBLISH_PER_MINUTE,
    },
    cors: { origins: corsOrigins(env.CORS_ORIGINS) },
    metricsToken: env.METRICS_TOKEN,
    oauth: {
      publicUrl: env.PUBLIC_URL?.replace(/\/+$/, ''),
      authorizationServers: authorizationServers(env.OAUTH_AUTHORIZATION_SERVERS, env.JWT_ISSUER),
    },
    upstreams: {
      allowedUrls: upstreamPrefixes(env.UPSTREAM_ALLOWED_URLS),
      secretKey: env.UPSTREAM_SECRET_KEY === undefined ? undefined : Buffer.from(env.UPSTREAM_SECRET_KEY, env.UPSTREAM_SECRET_KEY.length === 64 ? 'hex' : 'base64'),
      syncIntervalMs: env.UPSTREAM_SYNC_INTERVAL_MS,
      connectTimeoutMs: env.UPSTREAM_CONNECT_TIMEOUT_MS,
      callTimeoutMs: env.UPSTREAM_CALL_TIMEOUT_MS,
      maxResponseBytes: env.UPSTREAM_MAX_RESPONSE_BYTES,
      maxCallsInFlight: env.UPSTREAM_MAX_CALLS_IN_FLIGHT,
    },
    tracing: tracingConfig(env),
  };
}

/**
 * Tracing from the standard OTEL_* variables: on when an OTLP endpoint is set, unless the SDK or
 * the traces exporter is turned off. Signal-specific variables win over the general ones, as the
 * specification says. Only OTLP over HTTP is shipped: `grpc` stops the start with its name.
 */
function tracingConfig(env: Env): TracingConfig | undefined {
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  if (env.OTEL_SDK_DISABLED || env.OTEL_TRACES_EXPORTER === 'none' || endpoint === undefined) return undefined;
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new ConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL: '${protocol}' is not supported; use http/protobuf or http/json (OTLP over HTTP)`);
  }
  return {
    endpoint,
    protocol,
    headers: { ...keyValues('OTEL_EXPORTER_OTLP_HEADERS', env.OTEL_EXPORTER_OTLP_HEADERS), ...keyValues('OTEL_EXPORTER_OTLP_TRACES_HEADERS', env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    timeoutMs: env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT ?? 10_000,
    serviceName: env.OTEL_SERVICE_NAME,
    resourceAttributes: keyValues('OTEL_RESOURCE_ATTRIBUTES', env.OTEL_RESOURCE_ATTRIBUTES),
    sampler: env.OTEL_TRACES_SAMPLER,
    samplerRatio: env.OTEL_TRACES_SAMPLER_ARG ?? 1,
  };
}

/** Parses the OTEL_* `key1=value1,key2=value2` lists (values percent-encoded, as W3C Baggage writes them). */
function keyValues(variable: string, value: string | undefined): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const [index, item] of (value ?? '').split(',').entries()) {
    if (item.trim() === '') continue;
    const at = item.indexOf('=');
    const key = at > 0 ? item.slice(0, at).trim() : '';
    // Never echo the item: a header value may be a credential.
    if (key === '') throw new ConfigError(`${variable}: item ${index + 1} is not key=value`);
    try {
      pairs[key] = decodeURIComponent(item.slice(at + 1).trim());
    } catch {
      throw new ConfigError(`${variable}: the value of '${key}' is not valid percent-encoding`);
    }
  }
  return pairs;
}

/** Parses UPSTREAM_ALLOWED_URLS: absolute http(s) URL prefixes, normalized as URLs are. */
function upstreamPrefixes(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value.split(',').map((p) => p.trim()).filter(Boolean).map((prefix) => {
    let url: URL;
    try {
      url = new URL(prefix);
    } catch {
      throw new ConfigError(`UPSTREAM_ALLOWED_URLS: '${prefix}' is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`UPSTREAM_ALLOWED_URLS: '${prefix}' is not an http(s) URL`);
    if (url.username || url.password || url.search || url.hash) throw new ConfigError(`UPSTREAM_ALLOWED_URLS: '${prefix}' must be a scheme, host and optional path`);
    return url.href;
  });
}

/** Parses OAUTH_AUTHORIZATION_SERVERS (absolute http(s) URLs), defaulting to a URL-shaped JWT_ISSUER. */
function authorizationServers(value: string | undefined, issuer: string | undefined): string[] {
  if (value === undefined) return issuer !== undefined && /^https?:\/\/\S+$/.test(issuer) ? [issuer] : [];
  const servers = value.split(',').map((s) => s.trim()).filter(Boolean);
  for (const server of servers) {
    if (!/^https?:\/\/[^\s,]+$/.test(server)) throw new ConfigError(`OAUTH_AUTHORIZATION_SERVERS: '${server}' is not an http(s) URL`);
  }
  return servers;
}

/** Parses CORS_ORIGINS: exact origins (scheme://host[:port]) or a lone '*'. */
function corsOrigins(value: string | undefined): string[] {
  if (value === undefined) return [];
  const origins = value.split(',').map((o) => o.trim().replace(/\/+$/, '')).filter(Boolean);
  if (origins.includes('*')) {
    if (origins.length > 1) throw new ConfigError("CORS_ORIGINS: '*' cannot be combined with other origins");
    return ['*'];
  }
  for (const origin of origins) {
    if (!/^https?:\/\/[^/\s]+$/.test(origin)) throw new ConfigError(`CORS_ORIGINS: '${origin}' is not an origin like https://ui.example.com`);
  }
  return origins;
}
