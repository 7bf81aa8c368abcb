import { PGlite } from '@electric-sql/pglite';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';

import { endsIdle, servePgliteOverWire } from '../../src/db/pglite-wire.mjs';

/**
 * The wire leg's server: a pool of connections on PGlite's single backend must get every reply to
 * the query that asked for it, with transactions kept whole. Served by pglite-socket alone, the
 * first test's load gets dozens of wrong answers or errors ("portal does not exist") and can hang.
 */

type Served = { db: PGlite; server: PGLiteSocketServer; pool: pg.Pool };
let served: Served | undefined;

async function serve(): Promise<pg.Pool> {
  const db = await PGlite.create();
  const server = servePgliteOverWire(db, { host: '127.0.0.1', port: 0, maxConnections: 8 });
  await server.start();
  const pool = new pg.Pool({ connectionString: `postgres://postgres:postgres@${server.getServerConn()}/postgres`, max: 4 });
  served = { db, server, pool };
  return pool;
}

afterEach(async () => {
  await served?.pool.end();
  await served?.server.stop();
  await served?.db.close();
  served = undefined;
});

/** 400 parameterized queries at once, every seventh a transaction; returns the ones answered wrongly. */
async function mixedLoad(pool: pg.Pool): Promise<{ wrong: number; inserted: number }> {
  await pool.query('create table t (id int primary key)');
  const outcomes = await Promise.allSettled(
    Array.from({ length: 400 }, async (_, i) => {
      if (i % 7 === 0) {
        const client = await pool.connect();
        try {
          await client.query('begin');
          await client.query('insert into t values ($1)', [i]);
          await client.query('commit');
        } finally {
          client.release();
        }
        return true;
      }
      const { rows } = await pool.query<{ x: number; y: string }>('select $1::int as x, $2::text as y', [i, `s${i}`]);
      return rows[0]?.x === i && rows[0]?.y === `s${i}`;
    }),
  );
  const { rows } = await pool.query<{ n: number }>('select count(*)::int as n from t');
  return { wrong: outcomes.filter((o) => o.status === 'rejected' || !o.value).length, inserted: rows[0]!.n };
}

describe('PGlite over the wire', () => {
  it('answers every concurrent query of a pool with its own result, transactions whole', async () => {
    const pool = await serve();
    expect(await mixedLoad(pool)).toEqual({ wrong: 0, inserted: 58 });
  });

  it('recognizes an idle ReadyForQuery and nothing else', () => {
    expect(endsIdle(Uint8Array.of(0x5a, 0, 0, 0, 5, 0x49))).toBe(true);
    expect(endsIdle(Uint8Array.of(0x5a, 0, 0, 0, 5, 0x54))).toBe(false); // in a transaction block
    expect(endsIdle(Uint8Array.of(0x31, 0, 0, 0, 4))).toBe(false); // ParseComplete: more to come
  });
});
