import { type SQL, sql } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { beforeAll, describe, expect, it } from 'vitest';

import { DecisionWriter } from '../../src/authorize/decision-writer.js';
import { type DecisionRecord, findForDecisions } from '../../src/authorize/repository.js';
import { AuthorizeService } from '../../src/authorize/service.js';
import { type Db, rowsOf } from '../../src/db/client.js';
import { useDiscoveryApp } from '../discovery/helpers.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

/**
 * The database with its statements counted (every decision write is one `execute`); with `failure`,
 * every statement fails with it instead, a moment later (as a commit would).
 */
function counting(db: Db, failure?: () => Error): { db: Db; statements: () => number } {
  let statements = 0;
  const proxy = new Proxy(db, {
    get(target, key, receiver) {
      if (key !== 'execute') return Reflect.get(target, key, receiver) as unknown;
      return (...args: Parameters<Db['execute']>) => {
        statements += 1;
        if (!failure) return target.execute(...args);
        return new Promise((_, reject) => setTimeout(() => reject(failure()), 5));
      };
    },
  });
  return { db: proxy, statements: () => statements };
}

forEachDatabase((db) => {
  describe('decisions are group-committed', () => {
    const ctx = useDiscoveryApp(db, () => undefined);
    const tenant = uniqueTenant('group');
    let publisher: string;
    let caller: string;
    const ids = new Map<string, number>();

    beforeAll(async () => {
      publisher = await token({ tenant, scopes: [PUBLISH] });
      caller = await token({ tenant, scopes: [], sub: 'gateway-1' });
      for (const name of ['lookup_invoice', 'lookup_order']) {
        const body = toolDocument({ name, required_scopes: [], side_effects: false, sensitivity: 'low', policy: undefined });
        expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body })).statusCode).toBe(201);
      }
      const rows = await rowsOf<{ id: number; name: string }>(db.database.db.execute(sql`select id, name from tools where tenant_id = ${tenant}`));
      for (const row of rows) ids.set(row.name, Number(row.id));
    });

    const usage = async (name: string): Promise<number> => {
      const [row] = await rowsOf<{ calls: string | number }>(db.database.db.execute(sql`select calls from tool_usage where tool_id = ${ids.get(name)!} and tenant_id = ${tenant}`));
      return row ? Number(row.calls) : 0;
    };
    const audited = async (): Promise<number> => {
      const [row] = await rowsOf<{ n: string | number }>(db.database.db.execute(sql`select count(*) as n from audit_log where tenant_id = ${tenant} and action = 'authorize'`));
      return Number(row!.n);
    };

    it('answers concurrent calls each with its own decision, and records every one of them', async () => {
      const before = { audit: await audited(), invoice: await usage('lookup_invoice'), order: await usage('lookup_order') };
      const bodies = Array.from({ length: 30 }, (_, i) =>
        i % 3 === 2 ? { tool: 'lookup_order', arguments: { unexpected: i } } : { tool: i % 3 === 0 ? 'lookup_invoice' : 'lookup_order', arguments: { invoice_id: `inv_${i}` } },
      );
      const answers = await Promise.all(bodies.map((body) => call(ctx.app, 'POST', '/v1/authorize', { token: caller, body })));
      expect(answers.map((a) => a.statusCode)).toEqual(bodies.map(() => 200));
      expect(answers.map((a) => a.json<{ decision: string }>().decision)).toEqual(bodies.map((_, i) => (i % 3 === 2 ? 'deny' : 'allow')));
      expect(await audited()).toBe(before.audit + 30);
      // Allowed calls only: 10 of lookup_invoice, 10 of lookup_order (the 10 invalid ones are denied).
      expect(await usage('lookup_invoice')).toBe(before.invoice + 10);
      expect(await usage('lookup_order')).toBe(before.order + 10);
    });

    const record = (name: string, toolId: number | undefined): DecisionRecord => ({
      entry: { tenantId: tenant, at: new Date(), actor: 'gateway-1', action: 'authorize', toolName: name, toolVersion: '1.0.0', decision: toolId ? 'allow' : 'deny', reasons: [] },
      usage: toolId === undefined ? undefined : { toolId },
    });

    it('writes what arrives during a commit in one statement, and the first call at once', async () => {
      const counted = counting(db.database.db);
      const writer = new DecisionWriter(counted.db);
      const before = await usage('lookup_invoice');
      await writer.write(record('lookup_invoice', ids.get('lookup_invoice')));
      expect(counted.statements()).toBe(1);
      // 40 at once: the first goes alone, the 39 that queued behind it go together.
      await Promise.all(Array.from({ length: 40 }, () => writer.write(record('lookup_invoice', ids.get('lookup_invoice')))));
      expect(counted.statements()).toBe(3);
      expect(await usage('lookup_invoice')).toBe(before + 41);
    });

    it('keeps a batch size bound', async () => {
      const counted = counting(db.database.db);
      const writer = new DecisionWriter(counted.db, 10);
      await Promise.all(Array.from({ length: 31 }, () => writer.write(record('lookup_order', undefined))));
      // 1 alone, then 30 queued in batches of 10.
      expect(counted.statements()).toBe(4);
    });

    it('reads the tools of calls that arrive together in one statement, each call its own row', async () => {
      const dialect = new PgDialect();
      const statements: string[] = [];
      const recording = new Proxy(db.database.db, {
        get(target, key, receiver) {
          if (key !== 'execute') return Reflect.get(target, key, receiver) as unknown;
          return (query: SQL) => {
            statements.push(dialect.sqlToQuery(query).sql);
            return target.execute(query);
          };
        },
      });
      const service = new AuthorizeService(recording);
      const principal = { tenant, subject: 'gateway-1', scopes: [] };
      const names = ['lookup_invoice', 'lookup_order', 'no_such_tool'];
      const decisions = await Promise.all(Array.from({ length: 30 }, (_, i) => service.authorize(principal, { tool: names[i % 3]!, arguments: { invoice_id: `inv_${i}` } })));
      expect(decisions.map((d) => [d.tool.name, d.decision])).toEqual(Array.from({ length: 30 }, (_, i) => [names[i % 3], i % 3 === 2 ? 'deny' : 'allow']));
      expect(decisions[2]!.reasons.map((r) => r.code)).toEqual(['unknown_tool']);
      // The first call's read alone, then the 29 that arrived while it was in flight, together.
      expect(statements.filter((text) => text.includes('with ordinality')).length).toBe(2);
    });

    it('gives each named tool its own tenant\'s row, in the order asked, and nothing for a tool that does not exist', async () => {
      const other = uniqueTenant('group-other');
      const body = toolDocument({ name: 'lookup_order', version: '2.0.0', required_scopes: ['orders:read'], policy: undefined });
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: await token({ tenant: other, scopes: [PUBLISH] }), body })).statusCode).toBe(201);
      const rows = await findForDecisions(db.database.db, [
        { tenantId: other, name: 'lookup_order' },
        { tenantId: tenant, name: 'missing' },
        { tenantId: tenant, name: 'lookup_order' },
        { tenantId: other, name: 'lookup_invoice' },
      ]);
      expect(rows.map((r) => r && [r.name, r.version, r.requiredScopes])).toEqual([['lookup_order', '2.0.0', ['orders:read']], undefined, ['lookup_order', '1.0.0', []], undefined]);
      expect(rows[2]!.id).toBe(ids.get('lookup_order'));
      expect(rows[0]!.parameters).toMatchObject({ type: 'object', required: ['invoice_id'] });
      expect(await findForDecisions(db.database.db, [])).toEqual([]);
    });

    it.each([
      ['the database is unreachable', 'ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'],
      // A retry per decision would wait out the bound (or the lock) once more for each of them.
      ['the server cancelled the statement past its bound', '57014', 'canceling statement due to statement timeout'],
    ])('fails a batch whole, without a retry per decision, when %s', async (_, code, message) => {
      const counted = counting(db.database.db, () => Object.assign(new Error(message), { code }));
      const writer = new DecisionWriter(counted.db);
      const outcomes = await Promise.allSettled(Array.from({ length: 5 }, () => writer.write(record('lookup_order', ids.get('lookup_order')))));
      expect(outcomes.map((o) => o.status)).toEqual(Array(5).fill('rejected'));
      expect(outcomes.every((o) => o.status === 'rejected' && (o.reason as { code?: string }).code === code)).toBe(true);
      // The first alone, then the four that queued behind it, once: not once more each.
      expect(counted.statements()).toBe(2);
    });

    it('fails only the decision whose write fails, not the others in its batch', async () => {
      const writer = new DecisionWriter(db.database.db);
      const before = { audit: await audited(), order: await usage('lookup_order') };
      const gone = 9_999_999; // no such tool: its usage row breaks the foreign key
      const outcomes = await Promise.allSettled([
        writer.write(record('lookup_order', ids.get('lookup_order'))),
        writer.write(record('lookup_order', ids.get('lookup_order'))),
        writer.write(record('deleted_tool', gone)),
        writer.write(record('lookup_order', ids.get('lookup_order'))),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
      expect(await usage('lookup_order')).toBe(before.order + 3);
      expect(await audited()).toBe(before.audit + 3);
    });
  });
});
