import '../helpers/provided.js';

import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';

import { fromPglite, openEmbedded, openPostgres, rowsOf } from '../../src/db/client.js';
import { LOCK_FILE } from '../../src/db/data-dir-lock.js';
import { servePgliteOverWire } from '../../src/db/pglite-wire.mjs';
import { buildTestApp, call } from '../helpers/app.js';
import { clonePglite, forEachDatabase } from '../helpers/databases.js';
import { token } from '../helpers/tokens.js';

/** Driver edge cases on real PGlite instances: missing pgvector, an unreachable or vanished database. */

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('openPostgres', () => {
  it('fails clearly when the server lacks pgvector', async () => {
    // The migrated template opened without the vector extension bundle: no "vector" is available.
    const client = await PGlite.create({ loadDataDir: new Blob([readFileSync(inject('pgliteTemplate'))]) });
    const server = servePgliteOverWire(client, { host: '127.0.0.1', port: 0, maxConnections: 4 });
    await server.start();
    try {
      await expect(openPostgres(`postgres://postgres@${server.getServerConn()}/postgres`, 2)).rejects.toThrow(
        'the PostgreSQL server at DATABASE_URL lacks the pgvector extension ("vector"); use the pgvector/pgvector image or install pgvector',
      );
    } finally {
      await server.stop();
      await client.close();
    }
  });

  it('rejects when nothing listens at DATABASE_URL', async () => {
    await expect(openPostgres(`postgres://postgres@127.0.0.1:${await freePort()}/postgres`, 1)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});

/** The embedded database threads' socket directories now in the temporary folder. */
const socketDirs = () => readdirSync(tmpdir()).filter((name) => name.startsWith('tool-registry-db-'));

describe('openEmbedded: PGlite on a thread of its own, behind a private socket', () => {
  // A temporary folder of this file's own: other test files open embedded databases at the same time.
  const sharedTmp = process.env.TMPDIR;
  beforeEach(() => {
    process.env.TMPDIR = mkdtempSync(join(tmpdir(), 'embedded-tmp-'));
  });
  afterEach(() => {
    rmSync(tmpdir(), { recursive: true, force: true });
    if (sharedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = sharedTmp;
  });

  it('answers a pool of concurrent queries while the event loop stays free, keeps its data across a reopen, and leaves no socket or lock behind', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'embedded-'));
    const before = new Set(socketDirs());
    try {
      const first = await openEmbedded(dataDir, 4);
      expect(first.kind).toBe('pglite');
      const opened = socketDirs().filter((name) => !before.has(name));
      expect(opened).toHaveLength(1);
      expect(statSync(join(tmpdir(), opened[0]!)).mode & 0o777).toBe(0o700);
      await expect(openEmbedded(dataDir, 2)).rejects.toThrow(/already open in this process/);
      await first.db.execute(sql`create table kept (n int)`);
      await Promise.all(Array.from({ length: 20 }, (_, i) => first.db.execute(sql`insert into kept values (${i})`)));
      // In process, a running statement holds the event loop; on its own thread it does not.
      let ticks = 0;
      const timer = setInterval(() => (ticks += 1), 5);
      await first.db.execute(sql`select pg_sleep(0.2)`);
      clearInterval(timer);
      expect(ticks).toBeGreaterThan(10);
      await first.close();
      expect(socketDirs().filter((name) => !before.has(name))).toEqual([]);
      expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false);
      const second = await openEmbedded(dataDir, 2);
      const rows = await rowsOf<{ count: number }>(second.db.execute(sql`select count(*)::int as count from kept`));
      await second.close();
      expect(rows).toEqual([{ count: 20 }]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('fails clearly when the folder holds no database PGlite can open, and cleans up', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'embedded-bad-'));
    const before = new Set(socketDirs());
    try {
      writeFileSync(join(dataDir, 'PG_VERSION'), '99\n');
      mkdirSync(join(dataDir, 'base'));
      await expect(openEmbedded(dataDir, 2)).rejects.toThrow(/PGlite failed to initialize/);
      expect(socketDirs().filter((name) => !before.has(name))).toEqual([]);
      expect(existsSync(join(dataDir, LOCK_FILE))).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a database that goes away', () => {
  it('in-process: /readyz says unreachable and API calls get 503 with Retry-After', async () => {
    const client = await clonePglite();
    const app = await buildTestApp({ database: fromPglite(client) });
    try {
      expect((await call(app, 'GET', '/readyz')).statusCode).toBe(200);
      await client.close();
      const ready = await call(app, 'GET', '/readyz');
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toMatchObject({ status: 'not_ready', checks: { database: 'unreachable', migrations: 'unknown' } });
      const res = await call(app, 'GET', '/v1/tools', { token: await token() });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('2');
      expect(res.json().error).toMatchObject({ code: 'unavailable', message: 'the database is unavailable, retry shortly' });
    } finally {
      await app.close();
    }
  });

  it('over the wire: a transaction open when the server goes away fails, and nothing else does', async () => {
    // pg emits "Connection terminated unexpectedly" on the client a transaction holds; with no
    // listener there, that event was an uncaught exception (vitest reports it as an error).
    const client = await clonePglite();
    const server = servePgliteOverWire(client, { host: '127.0.0.1', port: 0, maxConnections: 4 });
    await server.start();
    const database = await openPostgres(`postgres://postgres@${server.getServerConn()}/postgres`, 2);
    try {
      let inside!: () => void;
      const entered = new Promise<void>((resolve) => (inside = resolve));
      const open = database.db.transaction(async (tx) => {
        await tx.execute(sql`select 1`);
        inside();
        await new Promise((resolve) => setTimeout(resolve, 300));
        await tx.execute(sql`select 2`);
      });
      await entered;
      await server.stop();
      await expect(open).rejects.toThrow();
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await database.close();
      await client.close();
    }
  });

  it('over the wire: a stopped server gives 503, not 500', async () => {
    const client = await clonePglite();
    const server = servePgliteOverWire(client, { host: '127.0.0.1', port: 0, maxConnections: 4 });
    await server.start();
    const database = await openPostgres(`postgres://postgres@${server.getServerConn()}/postgres`, 2);
    const app = await buildTestApp({ database });
    try {
      expect((await call(app, 'GET', '/v1/tools', { token: await token() })).statusCode).toBe(200);
      await server.stop();
      const res = await call(app, 'GET', '/v1/tools', { token: await token() });
      expect(res.statusCode).toBe(503);
      expect(res.json().error.code).toBe('unavailable');
      expect((await call(app, 'GET', '/readyz')).statusCode).toBe(503);
    } finally {
      await app.close();
      await database.close();
      await client.close();
    }
  });
});

forEachDatabase((db) => {
  describe('index builds', () => {
    it('build concurrently only on a real PostgreSQL (PGlite serves every connection from one backend)', () => {
      expect(db.database.concurrentIndexBuild).toBe(db.leg === 'postgres');
    });
  });

  describe('session settings', () => {
    it('every session walks the HNSW index iteratively and never JIT-compiles a statement', async () => {
      // Several at once, so a pooled driver answers from more than one connection.
      const settings = await Promise.all(
        Array.from({ length: 4 }, () =>
          rowsOf<{ scan: string; jit: string }>(db.database.db.execute(sql`select current_setting('hnsw.iterative_scan') as scan, current_setting('jit') as jit`)),
        ),
      );
      for (const [row] of settings) expect(row).toEqual({ scan: 'relaxed_order', jit: 'off' });
    });
  });
});
