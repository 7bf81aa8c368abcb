import { randomUUID } from 'node:crypto';

import { and, eq, sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { auditLog, discoveryLog } from '../../src/db/schema.js';
import { LogRetention, RETENTION_LOCK_KEY } from '../../src/retention/log-retention.js';
import { buildTestApp, call, useApp } from '../helpers/app.js';
import { type DatabaseHandle, forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

const quiet = { info: () => undefined, warn: () => undefined };

/** Moves rows `days` into the past. */
async function age(db: DatabaseHandle, table: 'discovery_log' | 'audit_log', where: ReturnType<typeof and>, days: number): Promise<void> {
  const target = table === 'discovery_log' ? discoveryLog : auditLog;
  await db.database.db.update(target).set({ at: sql`now() - make_interval(days => ${days})` }).where(where);
}

/** `count` discovery log rows of `tenant`, `daysOld` days old. */
async function discoveries(db: DatabaseHandle, tenant: string, count: number, daysOld: number): Promise<void> {
  await db.database.db.insert(discoveryLog).values(
    Array.from({ length: count }, (_, i) => ({
      id: randomUUID(),
      tenantId: tenant,
      at: new Date(Date.now() - daysOld * 86_400_000 - i * 1000),
      query: `query ${i}`,
      topK: 3,
      format: 'openai',
      shortlist: [],
      searchMode: 'lexical',
      lowConfidence: false,
      withheld: 0,
      latencyMs: 1,
    })),
  );
}

/** `count` audit records of `tenant`, `daysOld` days old, inserted oldest first (as time orders ids). */
async function auditRecords(db: DatabaseHandle, tenant: string, count: number, daysOld: number): Promise<void> {
  await db.database.db.insert(auditLog).values(
    Array.from({ length: count }, (_, i) => ({ tenantId: tenant, at: new Date(Date.now() - daysOld * 86_400_000 + i * 1000), action: 'authorize', toolName: 'issue_refund' })),
  );
}

const rowsOf = async (db: DatabaseHandle, table: 'discovery_log' | 'audit_log', tenant: string): Promise<number> => {
  const target = table === 'discovery_log' ? discoveryLog : auditLog;
  return (await db.database.db.select({ id: target.id }).from(target).where(eq(target.tenantId, tenant))).length;
};

forEachDatabase((db) => {
  describe('log retention through the API', () => {
    // Retention off while the logs fill, so nothing is deleted before the test ages rows.
    const ctx = useApp(db, { DISCOVERY_LOG_RETENTION_DAYS: '0', AUDIT_LOG_RETENTION_DAYS: '0' });
    const tenants = [uniqueTenant('keep-a'), uniqueTenant('keep-b')];
    const publishers: string[] = [];
    let later: FastifyInstance | undefined;

    beforeAll(async () => {
      for (const tenant of tenants) {
        const publisher = await token({ tenant, scopes: [PUBLISH] });
        publishers.push(publisher);
        expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: toolDocument() })).statusCode).toBe(201);
        for (const query of ['refund a paid invoice', 'cancel my subscription', 'give the money back']) {
          expect((await call(ctx.app, 'POST', '/v1/discover', { token: publisher, body: { query } })).statusCode).toBe(200);
        }
        const allowed = await call(ctx.app, 'POST', '/v1/authorize', { token: publisher, body: { tool: 'issue_refund', arguments: { invoice_id: 'inv_1' } } });
        expect(allowed.json()).toMatchObject({ decision: 'allow' });
        // Listing writes the buffered discovery log first.
        expect((await call(ctx.app, 'GET', '/v1/discoveries', { token: publisher })).json<{ discoveries: unknown[] }>().discoveries).toHaveLength(3);
        await age(db, 'discovery_log', and(eq(discoveryLog.tenantId, tenant), eq(discoveryLog.query, 'refund a paid invoice')), 31);
        await age(db, 'discovery_log', and(eq(discoveryLog.tenantId, tenant), eq(discoveryLog.query, 'cancel my subscription')), 10);
        await age(db, 'audit_log', and(eq(auditLog.tenantId, tenant), eq(auditLog.action, 'publish')), 8);
      }
    });

    afterAll(async () => {
      await later?.close();
    });

    const listed = async (publisher: string) => ({
      discoveries: (await call(ctx.app, 'GET', '/v1/discoveries', { token: publisher })).json<{ discoveries: { query: string }[] }>().discoveries.map((d) => d.query),
      audit: (await call(ctx.app, 'GET', '/v1/audit', { token: publisher })).json<{ entries: { action: string }[] }>().entries.map((e) => e.action),
    });
    // Discoveries of the last 30 days that no call cited (the five newest minutes are left out).
    const unanswered = async (app: FastifyInstance, publisher: string) =>
      (await call(app, 'GET', '/v1/reports/misses?days=30', { token: publisher })).json<{ unanswered_discoveries: { query: string }[] }>().unanswered_discoveries.map((d) => d.query);

    it('deletes every tenant\'s discoveries past DISCOVERY_LOG_RETENTION_DAYS at start, and keeps the audit log while its retention is 0', async () => {
      expect(await listed(publishers[0]!)).toEqual({ discoveries: ['give the money back', 'cancel my subscription', 'refund a paid invoice'], audit: ['authorize', 'publish'] });
      later = await buildTestApp({ database: db.database, env: { DISCOVERY_LOG_RETENTION_DAYS: '30', AUDIT_LOG_RETENTION_DAYS: '0' } });
      for (const publisher of publishers) {
        await vi.waitFor(async () => expect(await listed(publisher)).toEqual({ discoveries: ['give the money back', 'cancel my subscription'], audit: ['authorize', 'publish'] }), { timeout: 10_000, interval: 50 });
        expect(await unanswered(later, publisher)).toEqual(['cancel my subscription']);
      }
      await later.close();
      later = undefined;
    });

    it('deletes audit records past AUDIT_LOG_RETENTION_DAYS once it is set, and judges no older discovery unanswered', async () => {
      later = await buildTestApp({ database: db.database, env: { DISCOVERY_LOG_RETENTION_DAYS: '30', AUDIT_LOG_RETENTION_DAYS: '7' } });
      for (const publisher of publishers) {
        await vi.waitFor(async () => expect(await listed(publisher)).toEqual({ discoveries: ['give the money back', 'cancel my subscription'], audit: ['authorize'] }), { timeout: 10_000, interval: 50 });
        // Its calls' records would be gone by now: the report no longer calls it unanswered.
        expect(await unanswered(later, publisher)).toEqual([]);
      }
    });
  });

  describe('LogRetention', () => {
    it('deletes a backlog in batches, oldest first, and keeps what is younger and what another tenant has', async () => {
      const [old, young] = [uniqueTenant('backlog'), uniqueTenant('young')];
      await discoveries(db, old, 23, 40);
      await discoveries(db, old, 5, 1);
      await discoveries(db, young, 4, 1);
      await auditRecords(db, old, 17, 10);
      await auditRecords(db, old, 3, 0);
      const retention = new LogRetention(
        db.database.db,
        [
          { table: 'discovery_log', days: 30 },
          { table: 'audit_log', days: 7 },
        ],
        quiet,
        { batchRows: 4, pauseMs: 0 },
      );
      expect(await retention.runOnce()).toEqual({ discovery_log: 23, audit_log: 17 });
      expect([await rowsOf(db, 'discovery_log', old), await rowsOf(db, 'discovery_log', young), await rowsOf(db, 'audit_log', old)]).toEqual([5, 4, 3]);
      expect(await retention.runOnce()).toEqual({ discovery_log: 0, audit_log: 0 });
    });

    it('deletes nothing once its signal is aborted (the app closing), and finishes at the next pass', async () => {
      const tenant = uniqueTenant('stopped');
      await discoveries(db, tenant, 12, 40);
      const retention = new LogRetention(db.database.db, [{ table: 'discovery_log', days: 30 }], quiet, { batchRows: 5, pauseMs: 0 });
      expect(await retention.runOnce(AbortSignal.abort())).toEqual({});
      expect(await rowsOf(db, 'discovery_log', tenant)).toBe(12);
      expect(await retention.runOnce()).toEqual({ discovery_log: 12 });
      expect(await rowsOf(db, 'discovery_log', tenant)).toBe(0);
    });

    // A lock held in another transaction: PGlite serves one transaction at a time (the pass would wait for it).
    if (db.leg === 'postgres') it('leaves a tenant another replica is deleting to it, and goes on with the others', async () => {
      const [held, free] = [uniqueTenant('held'), uniqueTenant('free')];
      await discoveries(db, held, 3, 40);
      await discoveries(db, free, 3, 40);
      const other = await db.database.db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(${RETENTION_LOCK_KEY}, hashtext(${`discovery_log:${held}`}))`);
        const retention = new LogRetention(db.database.db, [{ table: 'discovery_log', days: 30 }], quiet, { pauseMs: 0 });
        return retention.runOnce();
      });
      expect(other).toEqual({ discovery_log: 3 });
      expect([await rowsOf(db, 'discovery_log', held), await rowsOf(db, 'discovery_log', free)]).toEqual([3, 0]);
      // Once that replica is gone, the next pass deletes them.
      expect(await new LogRetention(db.database.db, [{ table: 'discovery_log', days: 30 }], quiet, { pauseMs: 0 }).runOnce()).toEqual({ discovery_log: 3 });
    });

    it('goes on to the other tenants when one tenant\'s deletion fails, and says which', async () => {
      const [failing, next] = [uniqueTenant('a-fails'), uniqueTenant('b-next')];
      await discoveries(db, failing, 2, 40);
      await discoveries(db, next, 2, 40);
      const warned: unknown[] = [];
      const retention = new LogRetention(db.database.db, [{ table: 'discovery_log', days: 30 }], { info: () => undefined, warn: (details: object) => void warned.push(details) }, { pauseMs: 0 });
      vi.spyOn(db.database.db, 'transaction').mockRejectedValueOnce(new Error('canceling statement due to statement timeout'));
      try {
        expect(await retention.runOnce()).toEqual({ discovery_log: 2 });
      } finally {
        vi.restoreAllMocks();
      }
      expect(warned).toEqual([expect.objectContaining({ table: 'discovery_log', tenant: failing })]);
      expect([await rowsOf(db, 'discovery_log', failing), await rowsOf(db, 'discovery_log', next)]).toEqual([2, 0]);
    });

    it('keeps everything of a log whose retention is 0', async () => {
      const tenant = uniqueTenant('forever');
      await auditRecords(db, tenant, 3, 4000);
      const retention = new LogRetention(db.database.db, [{ table: 'audit_log', days: 0 }], quiet);
      expect(retention.enabled).toBe(false);
      expect(await retention.runOnce()).toEqual({});
      expect(await rowsOf(db, 'audit_log', tenant)).toBe(3);
    });
  });
});
