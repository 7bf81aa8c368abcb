import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

import type { FastifyBaseLogger } from 'fastify';

import { type Database, rowsOf } from './client.js';
import { sqlState } from './connection-errors.js';

export const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));

interface Migration {
  id: string;
  sql: string;
  checksum: string;
}

async function readMigrations(dir: string): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => {
      const sql = await readFile(new URL(file, `file://${dir.endsWith('/') ? dir : `${dir}/`}`), 'utf8');
      return { id: file.replace(/\.sql$/, ''), sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

export interface MigrateOptions {
  /**
   * How long one statement may wait for a table lock (default 3 s). A migration waiting for a lock
   * that a running replica's transaction holds would queue every later statement on that table
   * behind it, and stall the service for every tenant; past this it gives up, rolls back whole,
   * and tries again after `retryDelayMs(attempt)`.
   */
  lockTimeoutMs?: number;
  /** Tries in all before giving up (default 20: about 8 minutes with the default delays). */
  attempts?: number;
  /** Pause before try `attempt + 1` (default 1 s, doubling, at most 30 s). */
  retryDelayMs?: (attempt: number) => number;
  log?: Pick<FastifyBaseLogger, 'warn'>;
}

const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Applies pending migrations in one transaction under an advisory lock, so replicas starting
 * together apply each file exactly once. Refuses to run when an applied file was edited. A
 * statement that waits for a table lock past `lockTimeoutMs` rolls everything back and the whole
 * run is tried again (see MigrateOptions). Returns the ids applied by this call.
 */
export async function migrate(database: Database, dir: string = MIGRATIONS_DIR, options: MigrateOptions = {}): Promise<string[]> {
  const { lockTimeoutMs = 3_000, attempts = 20, retryDelayMs = (attempt: number) => Math.min(30_000, 1_000 * 2 ** (attempt - 1)), log } = options;
  const migrations = await readMigrations(dir);
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await applyPending(database, migrations, lockTimeoutMs);
    } catch (error) {
      if (sqlState(error) !== LOCK_NOT_AVAILABLE) throw error;
      if (attempt >= attempts) {
        throw new Error(`migrations not applied: ${attempts} tries each waited more than ${lockTimeoutMs} ms for a table lock that other sessions hold (see pg_locks)`, { cause: error });
      }
      const delay = retryDelayMs(attempt);
      log?.warn({ attempt, retryInMs: delay, lockTimeoutMs }, 'a migration waited too long for a table lock another session holds: rolled back, trying again');
      await sleep(delay);
    }
  }
}

async function applyPending(database: Database, migrations: Migration[], lockTimeoutMs: number): Promise<string[]> {
  return database.withMigrationLock(async (session) => {
    // Once this replica's turn has come (the advisory lock waits unbounded for another replica's run).
    await session.exec(`set local lock_timeout = ${Math.trunc(lockTimeoutMs)}`);
    // Deferred triggers (0012's catalog revision) would queue events across the files of this one
    // transaction, and DDL on a table with pending events fails: fire them as each statement ends.
    await session.exec('set constraints all immediate');
    await session.exec(`create table if not exists schema_migrations (
      id text primary key, checksum text not null, applied_at timestamptz not null default now())`);
    const applied = new Map(
      (await session.query<{ id: string; checksum: string }>('select id, checksum from schema_migrations')).map((r) => [r.id, r.checksum]),
    );
    const done: string[] = [];
    for (const migration of migrations) {
      const checksum = applied.get(migration.id);
      if (checksum !== undefined) {
        if (checksum !== migration.checksum) {
          throw new Error(`migration ${migration.id} was edited after it was applied; add a new migration instead`);
        }
        continue;
      }
      await session.exec(migration.sql);
      await session.query('insert into schema_migrations (id, checksum) values ($1, $2)', [migration.id, migration.checksum]);
      done.push(migration.id);
    }
    return done;
  });
}

/** Ids of migrations present on disk but not applied (empty when the schema is current). */
export async function pendingMigrations(database: Database, dir: string = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await readMigrations(dir);
  // Before the first migration the table does not exist: everything is pending.
  const rows = await rowsOf<{ id: string }>(database.db.execute('select id from schema_migrations')).catch(() => []);
  const applied = new Set(rows.map((r) => r.id));
  return migrations.filter((m) => !applied.has(m.id)).map((m) => m.id);
}
