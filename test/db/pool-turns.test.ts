import { AsyncLocalStorage } from 'node:async_hooks';

import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { callerTenant } from '../../src/auth/caller-tenant.js';
import { createPool, type Database, openPostgres } from '../../src/db/client.js';
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
      const store = new AsyncLocalStorage<string>();
      const pool = createPool(db.current.url!, 2, {}, () => store.getStore() ?? '');
      const out = new Set<pg.PoolClient>();
      const release = (client: pg.PoolClient) => {
        out.delete(client);
        client.release();
      };
      try {
        const held = await Promise.all([store.run('a', () => pool.connect()), store.run('a', () => pool.connect())]);
        held.forEach((client) => out.add(client));
        const order: string[] = [];
        const waits = ['a1', 'a2', 'a3', 'b1'].map((label) =>
          store.run(label[0]!, () => pool.connect()).then((client) => {
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
        // Every connection still works once the turns are over.
        const rows = await Promise.all(Array.from({ length: 4 }, () => pool.query('select 1 as one')));
        expect(rows.map((r) => r.rows[0].one)).toEqual([1, 1, 1, 1]);
        expect(pool.waitingCount).toBe(0);
      } finally {
        // A failed check must not leave connections out: end() would wait for them.
        [...out].forEach(release);
        await pool.end();
      }
    });

    it("a connection released as broken still gives its place back", async () => {
      const pool = createPool(db.current.url!, 1);
      try {
        const client = await pool.connect();
        const next = pool.connect();
        client.release(new Error('broken on purpose'));
        const replacement = await next;
        expect((await replacement.query('select 2 as two')).rows[0].two).toBe(2);
        replacement.release();
      } finally {
        await pool.end();
      }
    });
  });

  describe("requests reach the pool as their caller's tenant", () => {
    let database: Database;
    let app: FastifyInstance;
    const owners: string[] = [];

    beforeAll(async () => {
      database = await openPostgres(db.current.url!, 2, () => {
        const tenant = callerTenant();
        owners.push(tenant);
        return tenant;
      });
      app = await buildTestApp({ database });
    });
    afterAll(async () => {
      await app.close();
      await database.close();
    });

    it('names the token\'s tenant on every checkout of a publish, a discovery and an authorization', async () => {
      const tenant = uniqueTenant('turns');
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      owners.length = 0;
      expect((await call(app, 'POST', '/v1/tools', { token: publisher, body: toolDocument() })).statusCode).toBe(201);
      const discovered = await call(app, 'POST', '/v1/discover', { token: await token({ tenant, scopes: [] }), body: { query: 'refund an invoice' } });
      expect(discovered.statusCode).toBe(200);
      const authorized = await call(app, 'POST', '/v1/authorize', {
        token: await token({ tenant, scopes: [] }),
        body: { tool: 'issue_refund', arguments: { invoice_id: 'inv_1', amount: 100 } },
      });
      expect(authorized.statusCode).toBe(200);
      expect(owners.length).toBeGreaterThanOrEqual(3);
      // Background writes (the discovery log, the audit trail) may check out as the service itself.
      expect(owners.filter((owner) => owner === tenant).length).toBeGreaterThanOrEqual(3);
      expect(owners.filter((owner) => owner !== tenant && owner !== '')).toEqual([]);
    });
  });
}, ['pglite-socket', 'postgres']);
