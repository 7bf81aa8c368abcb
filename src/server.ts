import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';

import { buildApp } from './app.js';
import { createEmbedder, openMigratedDatabase, openReplicaFor, serverVerifier } from './bootstrap.js';
import type { Config } from './config.js';

/**
 * Starts the HTTP service: opens and migrates the database, builds the app, listens, and drains
 * in-flight requests on SIGTERM/SIGINT before closing the database.
 */
export async function startServer(config: Config): Promise<FastifyInstance> {
  const started = performance.now();
  const logger = pino({ level: config.logLevel, redact: ['req.headers.authorization', 'headers.authorization'] });
  // Before the database opens, so its statements are traced too. The SDK is imported only when configured.
  const tracing = config.tracing ? (await import('./telemetry/sdk.js')).startTracing(config.tracing) : undefined;
  const [database, embedder] = await Promise.all([openMigratedDatabase(config, logger), createEmbedder(config)]);
  let app: FastifyInstance;
  try {
    const readReplica = await openReplicaFor(config, database, logger);
    try {
      app = await buildApp({ config, database, readReplica, ownsDatabase: true, verify: serverVerifier(config, logger), embedder }, logger);
    } catch (error) {
      await readReplica?.close();
      throw error;
    }
  } catch (error) {
    await database.close();
    throw error;
  }
  // Last: spans of the requests drained at shutdown are exported too.
  if (tracing) app.addHook('onClose', () => tracing.shutdown());
  await app.listen({ port: config.port, host: config.host });
  app.log.info(
    { startupMs: Math.round(performance.now() - started), database: database.kind, readReplica: Boolean(config.readReplica), tracing: Boolean(config.tracing) },
    'tool registry ready',
  );

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down: draining in-flight requests');
    const force = setTimeout(() => {
      app.log.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    force.unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  return app;
}
