import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, expect, it } from 'vitest';

import { rowsOf } from '../../src/db/client.js';
import { migrate, MIGRATIONS_DIR, pendingMigrations } from '../../src/db/migrate.js';
import { databaseReadiness } from '../../src/db/plugin.js';
import { call, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';

/** The migration runner on every database leg (each file's database was migrated by the helper). */

const shipped = () => readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).sort();

forEachDatabase((db) => {
  const t = useApp(db);
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'registry-migrations-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** A migrations folder: the shipped files plus `extra` (name -> SQL). */
  function migrationsWith(name: string, extra: Record<string, string>): string {
    const target = join(dir, name);
    mkdirSync(target);
    for (const file of shipped()) copyFileSync(join(MIGRATIONS_DIR, file), join(target, file));
    for (const [file, sql] of Object.entries(extra)) writeFileSync(join(target, file), sql);
    return target;
  }

  it('applies nothing on a second run (idempotent) and reports nothing pending', async () => {
    expect(await migrate(db.database)).toEqual([]);
    expect(await pendingMigrations(db.database)).toEqual([]);
    const applied = await rowsOf<{ id: string }>(db.database.db.execute('select id from schema_migrations order by id'));
    expect(applied.map((r) => `${r.id}.sql`)).toEqual(shipped());
  });

  it('applies a new file exactly once when several migrate() calls race', async () => {
    const target = migrationsWith('race', { '9001_probe.sql': 'create table migration_probe (id int primary key); insert into migration_probe values (1);' });
    expect(await pendingMigrations(db.database, target)).toEqual(['9001_probe']);
    // Separate pools on the wire legs (as separate replicas would be); one connection in-process.
    const databases = db.leg === 'pglite' ? [db.database, db.database, db.database] : await Promise.all([1, 2, 3].map(() => db.current.connect(1)));
    const results = await Promise.all(databases.map((database) => migrate(database, target)));
    expect(results.flat()).toEqual(['9001_probe']);
    const rows = await rowsOf<{ n: number }>(db.database.db.execute('select count(*)::int as n from migration_probe'));
    expect(rows[0]?.n).toBe(1);
    expect(await pendingMigrations(db.database, target)).toEqual([]);
  });

  it('refuses to run when an applied migration was edited', async () => {
    const first = shipped()[0]!;
    const target = migrationsWith('edited', {});
    writeFileSync(join(target, first), `${readFileSync(join(MIGRATIONS_DIR, first), 'utf8')}\n-- edited after release\n`);
    await expect(migrate(db.database, target)).rejects.toThrow(`migration ${first.replace(/\.sql$/, '')} was edited after it was applied; add a new migration instead`);
  });

  it('rolls back a failing migration whole, recording nothing', async () => {
    const target = migrationsWith('failing', { '9002_broken.sql': 'create table half_done (id int); select * from no_such_table;' });
    await expect(migrate(db.database, target)).rejects.toThrow(/no_such_table/);
    expect(await pendingMigrations(db.database, target)).toEqual(['9002_broken']);
    const tables = await rowsOf<{ n: number }>(db.database.db.execute("select count(*)::int as n from information_schema.tables where table_name = 'half_done'"));
    expect(tables[0]?.n).toBe(0);
  });

  it('reports pending migrations in readiness (/readyz is 503 until they are applied)', async () => {
    expect(await databaseReadiness(db.database)).toEqual({ database: 'ok', migrations: 'ok' });
    const ready = await call(t.app, 'GET', '/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toMatchObject({ status: 'ready', checks: { database: 'ok', migrations: 'ok' } });

    const last = shipped().at(-1)!.replace(/\.sql$/, '');
    const [row] = await rowsOf<{ checksum: string }>(db.database.db.execute(`select checksum from schema_migrations where id = '${last}'`));
    await db.database.db.execute(`delete from schema_migrations where id = '${last}'`);
    try {
      const notReady = await call(t.app, 'GET', '/readyz');
      expect(notReady.statusCode).toBe(503);
      expect(notReady.json()).toMatchObject({ status: 'not_ready', checks: { database: 'ok', migrations: `pending: ${last}` } });
    } finally {
      await db.database.db.execute(`insert into schema_migrations (id, checksum) values ('${last}', '${row!.checksum}')`);
    }
    expect((await call(t.app, 'GET', '/readyz')).statusCode).toBe(200);
  });

  it('lists every shipped file as pending before the first migration', async () => {
    await db.database.db.execute('alter table schema_migrations rename to schema_migrations_aside');
    try {
      expect(await pendingMigrations(db.database)).toEqual(shipped().map((f) => f.replace(/\.sql$/, '')));
    } finally {
      await db.database.db.execute('alter table schema_migrations_aside rename to schema_migrations');
    }
  });
});
