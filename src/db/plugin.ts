import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

import type { Database, Db } from './client.js';
import { pendingMigrations } from './migrate.js';
import type { ReadReplica } from './read-replica.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The primary: writes, authorize, and reads that must see the caller's own writes. */
    database: Database;
    /** Reads that may lag the primary a little (discovery, listings, reports): the read replica when one is configured and healthy, else the primary. */
    reads: Db;
    /** `reads` as a tenant makes them: its statements wait for a connection in that tenant's turn. */
    readsAs: (tenant: string) => Db;
    /** DATABASE_READ_URL's replica, when configured. */
    readReplica: ReadReplica | undefined;
  }
}

/**
 * Exposes an open, migrated database (and its read replica, if any) to the app. The caller opens
 * them (server start-up or test helper) and decides whether the app owns them: owned ones are
 * closed with the app.
 */
export default fp(
  async (app: FastifyInstance, options: { database: Database; readReplica?: ReadReplica; owned: boolean }) => {
    app.decorate('database', options.database);
    app.decorate('reads', options.readReplica?.db ?? options.database.db);
    app.decorate('readsAs', options.readReplica?.as ?? options.database.as);
    app.decorate('readReplica', options.readReplica);
    if (options.owned) {
      app.addHook('onClose', async () => {
        await options.readReplica?.close();
        await options.database.close();
      });
    }
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
