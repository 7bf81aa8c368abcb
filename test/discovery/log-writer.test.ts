import { randomUUID } from 'node:crypto';

import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';

import { buildApp } from '../../src/app.js';
import { rowsOf } from '../../src/db/client.js';
import type { DiscoveryLogEntry } from '../../src/discovery/log-repository.js';
import { DiscoveryLogWriter } from '../../src/discovery/log-writer.js';
import { call, testConfig, testDependencies } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

const silent = { warn: () => undefined };
const entry = (tenantId: string, query: string): DiscoveryLogEntry => ({
  id: randomUUID(),
  tenantId,
  subject: 'agent',
  query,
  topK: 3,
  format: 'openai',
  filters: null,
  shortlist: [],
  searchMode: 'lexical',
  lowConfidence: true,
  topScore: null,
  withheld: 0,
  latencyMs: 1.5,
});

forEachDatabase((db) => {
  describe('discovery log writer', () => {
    const stored = async (tenant: string) =>
      rowsOf<{ id: string; query: string; at: Date | string }>(db.database.db.execute(sql`select id, query, at from discovery_log where tenant_id = ${tenant} order by at, query`));

    it('writes buffered entries in one batch on flush, each with the time it was appended', async () => {
      const tenant = uniqueTenant('log');
      const writer = new DiscoveryLogWriter(db.database.db, silent, { maxBuffered: 100, batchSize: 50, flushMs: 60_000 });
      const first = entry(tenant, 'first');
      writer.append(first);
      await new Promise((r) => setTimeout(r, 20));
      writer.append(entry(tenant, 'second'));
      expect(await stored(tenant)).toEqual([]);
      expect(writer.isPending(first.id)).toBe(true);

      await writer.flush();
      const rows = await stored(tenant);
      expect(rows.map((r) => r.query)).toEqual(['first', 'second']);
      expect(new Date(rows[1]!.at).getTime()).toBeGreaterThan(new Date(rows[0]!.at).getTime());
      expect(writer.isPending(first.id)).toBe(false);
      expect(writer.stats).toMatchObject({ written: 2, dropped: 0, buffered: 0 });
    });

    it('writes on its own after flushMs', async () => {
      const tenant = uniqueTenant('log');
      const writer = new DiscoveryLogWriter(db.database.db, silent, { maxBuffered: 100, batchSize: 50, flushMs: 30 });
      writer.append(entry(tenant, 'timed'));
      await expect.poll(async () => (await stored(tenant)).length, { timeout: 5_000 }).toBe(1);
    });

    it('drops and counts entries beyond its bound, never blocking', async () => {
      const tenant = uniqueTenant('log');
      const writer = new DiscoveryLogWriter(db.database.db, silent, { maxBuffered: 3, batchSize: 50, flushMs: 60_000 });
      for (let i = 0; i < 5; i += 1) writer.append(entry(tenant, `q${i}`));
      expect(writer.stats).toMatchObject({ dropped: 2, buffered: 3 });
      await writer.flush();
      expect((await stored(tenant)).map((r) => r.query)).toEqual(['q0', 'q1', 'q2']);
    });

    it('keeps entries across a failed write and writes them once the table is back', async () => {
      const tenant = uniqueTenant('log');
      const writer = new DiscoveryLogWriter(db.database.db, silent, { maxBuffered: 100, batchSize: 50, flushMs: 60_000 });
      const kept = entry(tenant, 'kept');
      await db.database.db.execute(sql`alter table discovery_log rename to discovery_log_away`);
      try {
        writer.append(kept);
        await writer.flush();
        expect(writer.stats.failedFlushes).toBe(1);
        expect(writer.isPending(kept.id)).toBe(true);
        // settle() gives up rather than spinning while the database refuses the write.
        await writer.settle(kept.id);
      } finally {
        await db.database.db.execute(sql`alter table discovery_log_away rename to discovery_log`);
      }
      await writer.settle(kept.id);
      expect((await stored(tenant)).map((r) => r.query)).toEqual(['kept']);
    });
  });

  describe('discovery log through the API', () => {
    it('a discovery_id is usable by /v1/authorize at once, and closing the app writes what is buffered', async () => {
      const app = await buildApp(testDependencies(testConfig(), db.database));
      await app.ready();
      const tenant = uniqueTenant('log');
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      const agent = await token({ tenant, scopes: [] });
      const doc = toolDocument({ name: 'reconcile_ledger', description: 'Match ledger entries against bank lines.', aliases: [], examples: [], summary: undefined, policy: undefined });
      expect((await call(app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
      expect((await call(app, 'POST', '/v1/tools', { token: publisher, body: { ...doc, name: 'send_email', description: 'Send an email.' } })).statusCode).toBe(201);

      // Found nothing for this jargon, then called reconcile_ledger: the call cites the discovery.
      const found = await call(app, 'POST', '/v1/discover', { token: agent, body: { query: 'do the month-end close' } });
      const discoveryId = found.json().discovery_id as string;
      const decision = await call(app, 'POST', '/v1/authorize', { token: agent, body: { tool: 'reconcile_ledger', arguments: { invoice_id: 'inv-1' }, discovery_id: discoveryId } });
      expect(decision.json().decision).toBe('allow');
      const misses = await rowsOf<{ query: string }>(db.database.db.execute(sql`select query from learned_aliases where tenant_id = ${tenant}`));
      expect(misses.map((m) => m.query)).toEqual(['do the month-end close']);

      const last = await call(app, 'POST', '/v1/discover', { token: agent, body: { query: 'send a note to finance' } });
      await app.close();
      const [row] = await rowsOf<{ query: string }>(db.database.db.execute(sql`select query from discovery_log where id = ${last.json().discovery_id as string}`));
      expect(row?.query).toBe('send a note to finance');
    });
  });
});
