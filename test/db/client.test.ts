import '../helpers/provided.js';

import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { describe, expect, inject, it } from 'vitest';

import { fromPglite, openPostgres, rowsOf } from '../../src/db/client.js';
import { buildTestApp, call } from '../helpers/app.js';
import { clonePglite, forEachDatabase } from '../helpers/databases.js';
import { servePgliteOverWire } from '../helpers/pglite-wire.js';
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
