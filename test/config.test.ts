import { describe, expect, it } from 'vitest';

import { ConfigError, loadConfig } from '../src/config.js';

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`configuration ${JSON.stringify(env)} was accepted`);
}

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    // toMatchObject: a new setting must not break this test; give it a defaults line here.
    expect(loadConfig({})).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: undefined,
      dataDir: './data',
      jwt: {
        secret: undefined,
        publicKey: undefined,
        jwksUrl: undefined,
        issuer: undefined,
        audience: undefined,
        clockToleranceSeconds: 30,
        tenantClaim: 'tenant_id',
        scopeClaim: 'scope',
      },
      embedding: { provider: 'local', url: undefined, model: undefined, apiKey: undefined, timeoutMs: 2000 },
      logLevel: 'info',
      limits: { bodyBytes: 262144, descriptionLength: 1024, summaryLength: 200, schemaDepth: 32, requestTimeoutMs: 30000, headersTimeoutMs: 10000, connectionsPerClient: 128 },
      shutdownTimeoutMs: 10000,
      databasePoolSize: 10,
      readReplica: undefined,
      learning: { enabled: true, minSubjects: 3, maxPerTool: 20, ttlDays: 30, votesPerHour: 20 },
      rateLimit: { discoverPerMinute: 600, authorizePerMinute: 3000, mcpPerMinute: 1200, publishPerMinute: 600 },
      cors: { origins: [] },
      metricsToken: undefined,
    });
  });

  it('converts and applies set values', () => {
    const config = loadConfig({
      PORT: '9090',
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://u:p@db/registry',
      DATA_DIR: 'memory://',
      JWT_ISSUER: 'https://idp',
      JWT_AUDIENCE: 'registry',
      TENANT_CLAIM: 'org',
      SCOPE_CLAIM: 'permissions',
      JWT_SECRET: 's'.repeat(32),
      EMBEDDING_PROVIDER: 'none',
      LOG_LEVEL: 'warn',
      BODY_LIMIT_BYTES: '4096',
      MAX_DESCRIPTION_LENGTH: '64',
      MAX_SUMMARY_LENGTH: '32',
      MAX_SCHEMA_DEPTH: '8',
    });
    expect(config).toMatchObject({
      port: 9090,
      host: '127.0.0.1',
      databaseUrl: 'postgres://u:p@db/registry',
      dataDir: 'memory://',
      jwt: { issuer: 'https://idp', audience: 'registry', tenantClaim: 'org', scopeClaim: 'permissions', secret: 's'.repeat(32) },
      embedding: { provider: 'none' },
      logLevel: 'warn',
      limits: { bodyBytes: 4096, descriptionLength: 64, summaryLength: 32, schemaDepth: 8 },
    });
  });

  it('treats empty strings as unset', () => {
    expect(loadConfig({ PORT: '', JWT_SECRET: '', DATABASE_URL: '' })).toMatchObject({ port: 8080, databaseUrl: undefined, jwt: { secret: undefined } });
  });

  it('ignores variables it does not know', () => {
    expect(() => loadConfig({ SOMETHING_ELSE: 'x', PATH: '/bin' })).not.toThrow();
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['JWT_SECRET', 'too-short'],
    ['JWKS_URL', 'file:///etc/jwks.json'],
    ['EMBEDDING_PROVIDER', 'magic'],
    ['LOG_LEVEL', 'verbose'],
    ['BODY_LIMIT_BYTES', '10'],
    ['MAX_DESCRIPTION_LENGTH', '1.5'],
    ['JWT_CLOCK_TOLERANCE_SECONDS', '-1'],
    ['SHUTDOWN_TIMEOUT_MS', 'soon'],
  ])('names the variable in the error: %s=%s', (name, value) => {
    expect(configError({ [name]: value }).message).toContain(name);
  });

  it('reports every invalid variable at once', () => {
    const { message } = configError({ PORT: 'x', LOG_LEVEL: 'loud' });
    expect(message).toContain('PORT');
    expect(message).toContain('LOG_LEVEL');
  });

  it('refuses JWT_SECRET together with JWT_PUBLIC_KEY or JWKS_URL', () => {
    expect(configError({ JWT_SECRET: 's'.repeat(32), JWT_PUBLIC_KEY: 'pem' }).message).toMatch(/JWT_SECRET cannot be combined/);
    expect(configError({ JWT_SECRET: 's'.repeat(32), JWKS_URL: 'https://idp/jwks' }).message).toMatch(/JWT_SECRET cannot be combined/);
  });

  it('refuses JWT_PUBLIC_KEY together with JWKS_URL', () => {
    expect(configError({ JWT_PUBLIC_KEY: 'pem', JWKS_URL: 'https://idp/jwks' }).message).toMatch(/either JWT_PUBLIC_KEY or JWKS_URL/);
  });

  it('needs EMBEDDING_URL and EMBEDDING_MODEL for the openai provider', () => {
    expect(configError({ EMBEDDING_PROVIDER: 'openai' }).message).toMatch(/EMBEDDING_URL and EMBEDDING_MODEL/);
    expect(loadConfig({ EMBEDDING_PROVIDER: 'openai', EMBEDDING_URL: 'http://localhost:1/v1', EMBEDDING_MODEL: 'm' }).embedding.provider).toBe('openai');
  });

  it('turns literal \\n in JWT_PUBLIC_KEY into newlines', () => {
    expect(loadConfig({ JWT_PUBLIC_KEY: '-----BEGIN PUBLIC KEY-----\\nabc\\n-----END PUBLIC KEY-----' }).jwt.publicKey).toBe(
      '-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----',
    );
  });

  it('reads DATABASE_READ_URL with its pool size, lag bound and check interval', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://primary/registry', DATABASE_READ_URL: 'postgres://replica/registry' }).readReplica).toEqual({
      url: 'postgres://replica/registry',
      poolSize: 10,
      statementTimeoutMs: 30_000,
      maxLagMs: 5000,
      checkIntervalMs: 1000,
    });
    expect(
      loadConfig({
        DATABASE_URL: 'postgres://primary/registry',
        DATABASE_READ_URL: 'postgres://replica/registry',
        DATABASE_READ_POOL_SIZE: '20',
        DATABASE_READ_MAX_LAG_MS: '0',
        DATABASE_READ_CHECK_INTERVAL_MS: '250',
      }).readReplica,
    ).toMatchObject({ poolSize: 20, maxLagMs: 0, checkIntervalMs: 250 });
  });

  it('refuses DATABASE_READ_URL without DATABASE_URL', () => {
    expect(configError({ DATABASE_READ_URL: 'postgres://replica/registry' }).message).toMatch(/^DATABASE_READ_URL needs DATABASE_URL/);
  });

  it('refuses a lag bound finer than two check intervals, and a check interval out of range', () => {
    const base = { DATABASE_URL: 'postgres://primary/registry', DATABASE_READ_URL: 'postgres://replica/registry' };
    expect(configError({ ...base, DATABASE_READ_MAX_LAG_MS: '1500' }).message).toMatch(/DATABASE_READ_MAX_LAG_MS must be 0 \(no lag rule\) or at least twice DATABASE_READ_CHECK_INTERVAL_MS/);
    expect(configError({ ...base, DATABASE_READ_CHECK_INTERVAL_MS: '10' }).message).toMatch(/DATABASE_READ_CHECK_INTERVAL_MS/);
    expect(configError({ ...base, DATABASE_READ_POOL_SIZE: '0' }).message).toMatch(/DATABASE_READ_POOL_SIZE/);
  });
});

describe('loadConfig: OpenTelemetry (OTEL_*)', () => {
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' };

  it('leaves tracing off unless an OTLP endpoint is set', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_SERVICE_NAME: 'registry', OTEL_TRACES_SAMPLER: 'always_on' }).tracing).toBeUndefined();
  });

  it('sends to <OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces with the specification\'s defaults', () => {
    expect(loadConfig(endpoint).tracing).toEqual({
      endpoint: 'http://collector:4318/v1/traces',
      protocol: 'http/protobuf',
      headers: {},
      timeoutMs: 10_000,
      serviceName: 'tool-registry',
      resourceAttributes: {},
      sampler: 'parentbased_always_on',
      samplerRatio: 1,
    });
  });

  it('prefers the traces-specific variables over the general ones', () => {
    const tracing = loadConfig({
      ...endpoint,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/v1/traces',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=general,x-team=a%20b',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'api-key=traces',
      OTEL_EXPORTER_OTLP_TIMEOUT: '3000',
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '2000',
      OTEL_SERVICE_NAME: 'registry-eu',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,service.namespace=agents',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    }).tracing;
    expect(tracing).toEqual({
      endpoint: 'https://traces.example/v1/traces',
      protocol: 'http/json',
      headers: { 'api-key': 'traces', 'x-team': 'a b' },
      timeoutMs: 2000,
      serviceName: 'registry-eu',
      resourceAttributes: { 'deployment.environment.name': 'prod', 'service.namespace': 'agents' },
      sampler: 'parentbased_traceidratio',
      samplerRatio: 0.25,
    });
  });

  it('turns tracing off with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none, endpoint or not', () => {
    expect(loadConfig({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).tracing).toBeUndefined();
    expect(loadConfig({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeUndefined();
  });

  it('refuses what it cannot honour, naming the variable and never echoing a header value', () => {
    expect(configError({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).message).toMatch(/OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' is not supported/);
    expect(configError({ ...endpoint, OTEL_TRACES_SAMPLER: 'sometimes' }).message).toMatch(/OTEL_TRACES_SAMPLER/);
    expect(configError({ ...endpoint, OTEL_TRACES_SAMPLER_ARG: '2' }).message).toMatch(/OTEL_TRACES_SAMPLER_ARG/);
    expect(configError({ ...endpoint, OTEL_TRACES_EXPORTER: 'zipkin' }).message).toMatch(/OTEL_TRACES_EXPORTER/);
    expect(configError({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }).message).toMatch(/OTEL_EXPORTER_OTLP_ENDPOINT/);
    const leak = configError({ ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: 'api-key=ok,sk-live-secret-token' });
    expect(leak.message).toBe('OTEL_EXPORTER_OTLP_HEADERS: item 2 is not key=value');
  });
});
