import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

import { type Database, rowsOf } from './client.js';

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

/**
 * Applies pending migrations in one transaction under an advisory lock, so replicas starting
 * together apply each file exactly once. Refuses to run when an applied file was edited.
 * Returns the ids applied by this call.
 */
export async function migrate(database: Database, dir: string = MIGRATIONS_DIR): Promise<string[]> {
  const migrations = await readMigrations(dir);
  return database.withMigrationLock(async (session) => {
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
