import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

import type { Database } from './client.js';
import { pendingMigrations } from './migrate.js';

declare module 'fastify' {
  interface FastifyInstance {
    database: Database;
  }
}

/**
 * Exposes an open, migrated database to the app. The caller opens it (server start-up or test
 * helper) and decides whether the app owns it: an owned database is closed with the app.
 */
export default fp(
  async (app: FastifyInstance, options: { database: Database; owned: boolean }) => {
    app.decorate('database', options.database);
    if (options.owned) app.addHook('onClose', async () => options.database.close());
  },
  { name: 'database' },
);

/** Readiness of the database: reachable, and no migration pending. */
export async function databaseReadiness(database: Database): Promise<{ database: string; migrations: string }> {
  try {
    await database.ping();
  } catch {
    return { database: 'unreachable', migrations: 'unknown' };
  }
  const pending = await pendingMigrations(database).catch(() => ['unknown']);
  return { database: 'ok', migrations: pending.length === 0 ? 'ok' : `pending: ${pending.join(', ')}` };
}
