import type { FastifyBaseLogger } from 'fastify';

import { devSecret } from './auth/dev-secret.js';
import { createVerifier, type TokenVerifier } from './auth/verifier.js';
import { type Config, ConfigError } from './config.js';
import { type Database, openEmbedded, openPostgres } from './db/client.js';
import { migrate } from './db/migrate.js';
import { openReadReplica, type ReadReplica } from './db/read-replica.js';
import { LocalEmbedder } from './embedding/local.js';
import { OpenAiEmbedder } from './embedding/openai.js';
import type { Embedder } from './embedding/provider.js';

/** Opens the configured database: PostgreSQL when DATABASE_URL is set, else embedded PGlite. */
export function openDatabase(config: Config): Promise<Database> {
  return config.databaseUrl
    ? openPostgres(config.databaseUrl, config.databasePoolSize, { statementTimeoutMs: config.databaseStatementTimeoutMs })
    : openEmbedded(config.dataDir, config.databasePoolSize);
}

/** Opens and migrates the database, logging what was applied. */
export async function openMigratedDatabase(config: Config, log: Pick<FastifyBaseLogger, 'info' | 'warn'>): Promise<Database> {
  const database = await openDatabase(config);
  try {
    const applied = await migrate(database, undefined, { log });
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
  } catch (error) {
    await database.close();
    throw error;
  }
  return database;
}

/** Opens DATABASE_READ_URL beside the migrated primary, when set (start-up fails with a clear reason). */
export async function openReplicaFor(config: Config, primary: Database, log: Pick<FastifyBaseLogger, 'info' | 'warn'>): Promise<ReadReplica | undefined> {
  return config.readReplica ? openReadReplica(config.readReplica, primary, log) : undefined;
}

/**
 * The JWT configuration in force. With no key configured, the embedded database runs in
 * development mode with a secret kept in DATA_DIR; an external database refuses to start.
 */
export function resolveJwt(config: Config, createDevSecret: boolean): { jwt: Config['jwt']; developmentMode: boolean } {
  const { jwt } = config;
  if (jwt.secret || jwt.publicKey || jwt.jwksUrl) return { jwt, developmentMode: false };
  if (config.databaseUrl) {
    throw new ConfigError('DATABASE_URL is set but no JWT key is: set JWT_PUBLIC_KEY, JWKS_URL or JWT_SECRET');
  }
  const secret = devSecret(config.dataDir, createDevSecret);
  if (!secret) throw new ConfigError(`no JWT key configured and no development secret in ${config.dataDir}; start the service once first`);
  return { jwt: { ...jwt, secret }, developmentMode: true };
}

/** The token verifier for the server, logging loudly when it runs in development mode. */
export function serverVerifier(config: Config, log: Pick<FastifyBaseLogger, 'warn'>): TokenVerifier {
  const { jwt, developmentMode } = resolveJwt(config, true);
  if (developmentMode) {
    log.warn(
      { dataDir: config.dataDir },
      'DEVELOPMENT MODE: no JWT key configured; tokens are signed with a generated secret kept in DATA_DIR. Mint one with: npm run token -- --tenant acme --scope "registry:publish"',
    );
  }
  return createVerifier(jwt);
}

/** The configured embedder, loaded and warmed up; undefined for EMBEDDING_PROVIDER=none. */
export async function createEmbedder(config: Config): Promise<Embedder | undefined> {
  const { embedding } = config;
  switch (embedding.provider) {
    case 'none':
      return undefined;
    case 'local':
      return LocalEmbedder.load({ indexThreads: embedding.localThreads, maxChars: embedding.localMaxChars });
    case 'openai':
      return new OpenAiEmbedder({ url: embedding.url!, model: embedding.model!, apiKey: embedding.apiKey, timeoutMs: embedding.timeoutMs });
  }
}
