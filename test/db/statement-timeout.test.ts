import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Database, openPostgres } from '../../src/db/client.js';
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate.js';
import { buildTestApp, call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

// Long enough that publishing and listing never reach it on a loaded machine; the pauses below are twice it.
const BOUND_MS = 1_000;

// PostgreSQL alone can stop a running statement (PGlite runs each to completion and ignores the setting).
forEachDatabase(
  (db) => {
    describe('DATABASE_STATEMENT_TIMEOUT_MS', () => {
      const tenant = uniqueTenant('bounded');
      let bounded: Database;
      let app: FastifyInstance;
      let publisher: string;

      beforeAll(async () => {
        bounded = await openPostgres(db.current.url!, 2, { statementTimeoutMs: BOUND_MS });
        app = await buildTestApp({ database: bounded, env: { DATABASE_STATEMENT_TIMEOUT_MS: String(BOUND_MS) } });
        publisher = await token({ tenant, scopes: [PUBLISH] });
        expect((await call(app, 'POST', '/v1/tools', { token: publisher, body: toolDocument() })).statusCode).toBe(201);
      });

      afterAll(async () => {
        await app?.close();
        await bounded?.close();
      });

      it('cancels statements stuck behind a lock with 503, and the pool serves again once the lock goes', async () => {
        const holder = new pg.Client({ connectionString: db.current.url! });
        await holder.connect();
        try {
          await holder.query('begin');
          await holder.query('lock table tools in access exclusive mode');
          // More requests than the pool has connections: each waits its turn, and each is cancelled.
          const stuck = await Promise.all(Array.from({ length: 5 }, () => call(app, 'GET', '/v1/tools', { token: publisher })));
          for (const response of stuck) {
            expect(response.statusCode).toBe(503);
            expect(response.headers['retry-after']).toBe('5');
            expect(response.json()).toMatchObject({ error: { code: 'unavailable', message: expect.stringContaining('DATABASE_STATEMENT_TIMEOUT_MS') } });
          }
          await holder.query('rollback');
          const listed = await call(app, 'GET', '/v1/tools', { token: publisher });
          expect(listed.statusCode).toBe(200);
          expect(listed.json<{ tools: { name: string }[] }>().tools.map((t) => t.name)).toEqual(['issue_refund']);
        } finally {
          await holder.end();
        }
      });

      it('exempts migrations and sessions reserved for long work, and a reserved session gets its bound back', async () => {
        // One connection: the statement after the reserved session runs on the session's connection.
        const single = await openPostgres(db.current.url!, 1, { statementTimeoutMs: BOUND_MS });
        try {
          const pause = `select pg_sleep(${(2 * BOUND_MS) / 1000})`;
          await single.withMigrationLock((session) => session.exec(pause));
          await single.withSession((session) => session.exec(pause));
          expect(await single.db.execute(sql`show statement_timeout`)).toMatchObject({ rows: [{ statement_timeout: '1s' }] });
          await expect(single.db.execute(sql.raw(pause))).rejects.toMatchObject({ cause: { code: '57014' } });
          expect(await single.db.execute(sql`select 1 as one`)).toMatchObject({ rows: [{ one: 1 }] });
        } finally {
          await single.close();
        }
      });

      it('a migration waiting for a table lock gives up after its lock timeout, lets other statements through, and applies once the lock goes', async () => {
        const dir = mkdtempSync(join(tmpdir(), 'registry-migrations-'));
        for (const file of readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql'))) copyFileSync(join(MIGRATIONS_DIR, file), join(dir, file));
        writeFileSync(join(dir, '9003_lock_probe.sql'), 'alter table tools add column lock_probe int;');
        const holder = new pg.Client({ connectionString: db.current.url! });
        await holder.connect();
        const warnings: object[] = [];
        try {
          // A long reading transaction holds ACCESS SHARE on tools; the ALTER needs ACCESS EXCLUSIVE.
          await holder.query('begin');
          await holder.query('select count(*) from tools');
          const migrating = migrate(bounded, dir, { lockTimeoutMs: 200, retryDelayMs: () => 100, log: { warn: (obj: object) => void warnings.push(obj) } });
          for (let i = 0; i < 300 && warnings.length < 2; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
          // Without the lock timeout, every statement on tools would queue behind the waiting ALTER.
          for (let i = 0; i < 5; i += 1) {
            const read = bounded.db.execute(sql`select count(*)::int as n from tools`);
            expect(await Promise.race([read.then(() => 'read'), new Promise((resolve) => setTimeout(() => resolve('stuck'), 3_000))])).toBe('read');
          }
          expect(warnings.length).toBeGreaterThan(1);
          expect(warnings[0]).toMatchObject({ attempt: 1, lockTimeoutMs: 200 });
          await holder.query('rollback');
          expect(await migrating).toEqual(['9003_lock_probe']);
          // Tries in all: refused with the reason once they run out.
          await holder.query('begin');
          await holder.query('select count(*) from tools');
          writeFileSync(join(dir, '9004_lock_probe.sql'), 'alter table tools drop column lock_probe;');
          await expect(migrate(bounded, dir, { lockTimeoutMs: 100, attempts: 2, retryDelayMs: () => 50 })).rejects.toThrow('migrations not applied: 2 tries each waited more than 100 ms for a table lock');
          await holder.query('rollback');
          expect(await migrate(bounded, dir)).toEqual(['9004_lock_probe']);
        } finally {
          await holder.end();
          await bounded.db.execute(sql`delete from schema_migrations where id like '900%_lock_probe'`);
          rmSync(dir, { recursive: true, force: true });
        }
      });
    });
  },
  ['postgres'],
);
