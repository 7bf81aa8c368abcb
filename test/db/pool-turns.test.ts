import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createPool, type Database, openPostgres, poolAs } from '../../src/db/client.js';
import { TurnGate } from '../../src/db/pool-turns.js';
import { buildTestApp, call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

/** Resolves once `probe` holds, checking after each turn of the event loop (fails after 5 s). */
async function until(probe: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error('condition not reached in 5 s');
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Cuts `client`'s connection as a network failure or a database restart would, and waits until pg has seen it close. */
async function dropConnection(client: pg.PoolClient): Promise<void> {
  const ended = new Promise((resolve) => client.once('end', resolve));
  (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  await ended;
}

describe('TurnGate', () => {
  it('grants free places at once, then serves waiting owners in turns as places come back', async () => {
    const gate = new TurnGate(2);
    await gate.acquire('a');
    await gate.acquire('a');
    const order: string[] = [];
    const waits = ['a1', 'a2', 'a3', 'b1', 'c1', 'b2'].map((label) => gate.acquire(label[0]!).then(() => order.push(label)));
    expect(gate.queued).toBe(6);
    for (let released = 1; released <= 6; released += 1) {
      gate.release();
      await until(() => order.length === released);
    }
    await Promise.all(waits);
    // First come, first served would be a1 a2 a3 b1 c1 b2.
    expect(order).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3']);
    expect(gate.queued).toBe(0);
  });

  it('gives a released place back to the free ones when nobody waits', async () => {
    const gate = new TurnGate(1);
    await gate.acquire('a');
    gate.release();
    let granted = false;
    await gate.acquire('b').then(() => (granted = true));
    expect(granted).toBe(true);
    expect(gate.queued).toBe(0);
  });

  it("rejects a wait longer than its timeout with pg-pool's message, and skips it when a place comes back", async () => {
    const gate = new TurnGate(1);
    await gate.acquire('a');
    await expect(gate.acquire('b', 20)).rejects.toThrow('timeout exceeded when trying to connect');
    expect(gate.queued).toBe(0);
    const next = gate.acquire('c', 0);
    gate.release();
    await next;
    // The place went to c, not to the waiter that gave up: nothing is free now.
    let extra = false;
    const late = gate.acquire('d').then(() => (extra = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(extra).toBe(false);
    gate.release();
    await late;
  });
});

forEachDatabase((db) => {
  describe('the pool takes tenants in turns', () => {
    it('hands a released connection to the next tenant in turn, not to the oldest waiter', async () => {
      const pool = createPool(db.current.url!, 2);
      const out = new Set<pg.PoolClient>();
      const release = (client: pg.PoolClient) => {
        out.delete(client);
        client.release();
      };
      try {
        const held = await Promise.all([poolAs(pool, 'a').connect(), poolAs(pool, 'a').connect()]);
        held.forEach((client) => out.add(client));
        const order: string[] = [];
        const waits = ['a1', 'a2', 'a3', 'b1'].map((label) =>
          poolAs(pool, label[0]!)
            .connect()
            .then((client) => {
              order.push(label);
              out.add(client);
            }),
        );
        expect(pool.waitingCount).toBe(4);
        release(held[0]!);
        await until(() => order.length === 1);
        release(held[1]!);
        await until(() => order.length === 2);
        // b1 came last; with pg-pool's own queue it would wait for a2 and a3 as well.
        expect(order).toEqual(['a1', 'b1']);
        [...out].forEach(release);
        await until(() => order.length === 4);
        [...out].forEach(release);
        await Promise.all(waits);
        expect(order).toEqual(['a1', 'b1', 'a2', 'a3']);
        // Every connection still works once the turns are over, through the pool and through a view.
        const rows = await Promise.all(Array.from({ length: 4 }, (_, i) => (i % 2 ? pool : poolAs(pool, 'c')).query('select 1 as one')));
        expect(rows.map((r) => r.rows[0].one)).toEqual([1, 1, 1, 1]);
        expect(pool.waitingCount).toBe(0);
      } finally {
        // A failed check must not leave connections out: end() would wait for them.
        [...out].forEach(release);
        await pool.end();
      }
    });

    it('a connection released as broken gives its place back once it is closed, not before', async () => {
      const pool = createPool(db.current.url!, 1);
      try {
        const client = await pool.connect();
        const next = pool.connect();
        let removed = false;
        pool.once('remove', () => (removed = true));
        client.release(new Error('broken on purpose'));
        // Still closing: a replacement opened now could exceed the connections the server allows.
        expect(pool.waitingCount).toBe(1);
        const replacement = await next;
        expect(removed).toBe(true);
        expect((await replacement.query('select 2 as two')).rows[0].two).toBe(2);
        replacement.release();
      } finally {
        await pool.end();
      }
    });

    it('a connection that dies while checked out gives its place back at once, before its holder finds out', async () => {
      const pool = createPool(db.current.url!, 1, { connectionTimeoutMillis: 2_000 });
      try {
        const client = await pool.connect();
        await dropConnection(client);
        // The place came back when the connection ended. The holder finds out on its next statement
        // and releases the client with that error, as queryAs does; that release does nothing more.
        const error = await client.query('select 1').catch((e: Error) => e);
        client.release(error as Error);
        expect((await pool.query('select 3 as three')).rows[0].three).toBe(3);
      } finally {
        await pool.end();
      }
    });

    it('a transaction whose BEGIN finds its connection dead gives the place back', async () => {
      const pool = createPool(db.current.url!, 1, { connectionTimeoutMillis: 2_000 });
      try {
        // drizzle's transaction sends BEGIN outside its try/finally: when BEGIN fails, it never releases its client.
        pool.once('acquire', (client: pg.PoolClient) => void dropConnection(client));
        const drizzleDb = drizzle({ client: pool });
        await expect(drizzleDb.transaction(async (tx) => tx.execute(sql`select 1`))).rejects.toThrow();
        expect((await pool.query('select 4 as four')).rows[0].four).toBe(4);
        expect((await drizzleDb.transaction(async (tx) => tx.execute(sql`select 5 as five`))).rows[0]).toEqual({ five: 5 });
      } finally {
        await pool.end();
      }
    });
  });

  describe('the database as a tenant', () => {
    let database: Database;
    let app: FastifyInstance;
    const owners: string[] = [];

    beforeAll(async () => {
      database = await openPostgres(db.current.url!, 2);
      const as = database.as;
      database.as = (owner) => {
        owners.push(owner);
        return as(owner);
      };
      app = await buildTestApp({ database });
    });
    afterAll(async () => {
      await app.close();
      await database.close();
    });

    it("runs its statements in the tenant's turn: one gets the next free connection ahead of the service's queued checkouts", async () => {
      // A database of its own: the app's background work must not queue on this pool meanwhile.
      const own = await openPostgres(db.current.url!, 2);
      const pool = own.pool!;
      const out = new Set<pg.PoolClient>();
      try {
        const held = await Promise.all([pool.connect(), pool.connect()]);
        held.forEach((client) => out.add(client));
        const granted: pg.PoolClient[] = [];
        const waits = [pool.connect(), pool.connect()].map((waiting) =>
          waiting.then((client) => {
            granted.push(client);
            out.add(client);
          }),
        );
        let done = false;
        const statement = own
          .as('tenant-t')
          .execute(sql`select 1 as one`)
          .then(() => (done = true));
        await until(() => pool.waitingCount === 3);
        out.delete(held[0]!);
        held[0]!.release();
        await until(() => granted.length === 1);
        out.delete(held[1]!);
        held[1]!.release();
        // The service queued first and takes the first turn; the tenant's statement takes the next
        // and finishes, then the service's second checkout gets the connection it gave back. First
        // come, first served would give that checkout the connection and leave the statement
        // waiting while both are held.
        await until(() => granted.length === 2);
        expect(await Promise.race([statement.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 300))])).toBe(true);
        expect(done).toBe(true);
        for (const client of [...out]) {
          out.delete(client);
          client.release();
        }
        await Promise.all(waits);
      } finally {
        for (const client of out) client.release();
        await own.close();
      }
    });

    it("makes a discovery's reads as the caller's tenant, through REST and MCP find_tools", async () => {
      const tenant = uniqueTenant('turns');
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      expect((await call(app, 'POST', '/v1/tools', { token: publisher, body: toolDocument() })).statusCode).toBe(201);
      const caller = await token({ tenant, scopes: [] });
      owners.length = 0;
      const discovered = await call(app, 'POST', '/v1/discover', { token: caller, body: { query: 'refund a paid invoice' } });
      expect(discovered.statusCode).toBe(200);
      expect(discovered.json().tools.map((t: { name: string }) => t.name)).toEqual(['issue_refund']);
      expect(owners).toEqual([tenant]);
      const found = await app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { authorization: `Bearer ${caller}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'find_tools', arguments: { query: 'give money back' } } },
      });
      expect(found.statusCode).toBe(200);
      expect(found.json().result.isError).not.toBe(true);
      expect(owners).toEqual([tenant, tenant]);
    });

    it("makes a publisher's writes and reads, and every listing, as the caller's tenant", async () => {
      const tenant = uniqueTenant('turns-publish');
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      const reader = await token({ tenant, scopes: [] });
      owners.length = 0;
      const doc = toolDocument();
      expect((await call(app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
      expect((await call(app, 'PUT', `/v1/tools/${doc.name}`, { token: publisher, body: { ...doc, version: '1.1.0', description: `${doc.description} Now in euros too.` } })).statusCode).toBe(200);
      expect((await call(app, 'GET', `/v1/tools/${doc.name}`, { token: reader })).statusCode).toBe(200);
      expect((await call(app, 'GET', `/v1/tools/${doc.name}/versions`, { token: publisher })).statusCode).toBe(200);
      expect((await call(app, 'GET', '/v1/tools', { token: reader })).json().tools).toHaveLength(1);
      expect((await call(app, 'DELETE', `/v1/tools/${doc.name}`, { token: publisher })).statusCode).toBe(200);
      expect(owners.length).toBeGreaterThanOrEqual(6);
      expect(new Set(owners)).toEqual(new Set([tenant]));
    });
  });
}, ['pglite-socket', 'postgres']);
