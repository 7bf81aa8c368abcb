import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';

/**
 * Environment variables, validated once at boot. Names marked fixed in DESIGN.md keep their names;
 * the others extend the contract and are documented in the README.
 */
const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ default: '0.0.0.0' }),
  DATABASE_URL: Type.Optional(Type.String({ minLength: 1 })),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
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
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
  BODY_LIMIT_BYTES: Type.Integer({ minimum: 1024, maximum: 16 * 1024 * 1024, default: 256 * 1024 }),
  MAX_DESCRIPTION_LENGTH: Type.Integer({ minimum: 16, maximum: 100000, default: 1024 }),
  MAX_SUMMARY_LENGTH: Type.Integer({ minimum: 16, maximum: 10000, default: 200 }),
  MAX_SCHEMA_DEPTH: Type.Integer({ minimum: 2, maximum: 256, default: 32 }),
  SHUTDOWN_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 600000, default: 10000 }),
});

export type Env = Static<typeof EnvSchema>;

/** The service's typed configuration. */
export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
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
  };
  logLevel: string;
  limits: {
    bodyBytes: number;
    descriptionLength: number;
    summaryLength: number;
    schemaDepth: number;
  };
  shutdownTimeoutMs: number;
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
  return {
    port: env.PORT,
    host: env.HOST,
    databaseUrl: env.DATABASE_URL,
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
    },
    logLevel: env.LOG_LEVEL,
    limits: {
      bodyBytes: env.BODY_LIMIT_BYTES,
      descriptionLength: env.MAX_DESCRIPTION_LENGTH,
      summaryLength: env.MAX_SUMMARY_LENGTH,
      schemaDepth: env.MAX_SCHEMA_DEPTH,
    },
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS,
  };
}
