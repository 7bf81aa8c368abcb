import { describe, expect, it } from 'vitest';

import { withClient } from '../../scripts/pg-session.js';
import { rowsOf } from '../../src/db/client.js';
import { toAppError } from '../../src/http/error-handler.js';
import { call, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { expectCleanError } from './helpers.js';

/**
 * Issue 32, finding 11 (replayed on native PostgreSQL, where backends can be terminated one by
 * one): a PUT whose connection dies inside its transaction answered 500 ("rollback: Client has
 * encountered a connection error"), because drizzle throws the failed ROLLBACK's error in place of
 * the statement's. Deterministic: a second session holds the tool's row lock, so the PUT waits
 * inside its transaction; that waiting backend is terminated, then the lock is let go.
 */
forEachDatabase((db) => {
  describe('a PUT whose connection is terminated mid-transaction', () => {
    const ctx = useApp(db);
    const tenant = uniqueTenant('rollback');

    it('answers 503 with Retry-After (the README promise), not 500, and the next PUT succeeds', async () => {
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: toolDocument() })).statusCode).toBe(201);

      const outcome = await withClient(db.current.url!, async (blocker) => {
        await blocker.query('begin');
        await blocker.query(`select 1 from tools where tenant_id = $1 and name = 'issue_refund' for update`, [tenant]);
        const [me] = (await blocker.query<{ pid: number }>('select pg_backend_pid() as pid')).rows;
        const put = call(ctx.app, 'PUT', '/v1/tools/issue_refund', { token: publisher, body: toolDocument({ version: '1.1.0' }) });
        // The PUT's backend shows up as waiting on the blocker's lock (polled, no timing assumption).
        let victim: number | undefined;
        while (victim === undefined) {
          const rows = await blocker.query<{ pid: number }>('select pid from pg_stat_activity where $1 = any(pg_blocking_pids(pid))', [me!.pid]);
          victim = rows.rows[0]?.pid;
          if (victim === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await blocker.query('select pg_terminate_backend($1)', [victim]);
        const response = await put;
        await blocker.query('rollback');
        return response;
      });

      expectCleanError(outcome, 503);
      expect(outcome.headers['retry-after']).toBeDefined();
      expect(outcome.json<{ error: { code: string } }>().error.code).toBe('unavailable');
      // Nothing of the interrupted PUT was stored, and the pool recovered for the next one.
      const [row] = await rowsOf<{ version: string }>(db.database.db.execute(`select version from tools where tenant_id = '${tenant}' and name = 'issue_refund'`));
      expect(row?.version).toBe('1.0.0');
      const again = await call(ctx.app, 'PUT', '/v1/tools/issue_refund', { token: publisher, body: toolDocument({ version: '1.1.0' }) });
      expect(again.statusCode, again.body).toBe(200);
    });

    it('maps a transaction whose connection died between two statements to 503 (the ROLLBACK fails too)', async () => {
      const failure = await db.database.db
        .transaction(async (tx) => {
          const [me] = await rowsOf<{ pid: number }>(tx.execute('select pg_backend_pid() as pid'));
          await withClient(db.current.url!, async (admin) => {
            await admin.query('select pg_terminate_backend($1)', [me!.pid]);
            while ((await admin.query('select 1 from pg_stat_activity where pid = $1', [me!.pid])).rowCount! > 0) await new Promise((resolve) => setTimeout(resolve, 10));
          });
          // Let the client read the server's goodbye, as during an outage between two statements.
          await new Promise((resolve) => setTimeout(resolve, 50));
          await tx.execute('select 1');
        })
        .then(
          () => undefined,
          (error: Error) => error,
        );
      expect(failure).toBeInstanceOf(Error);
      const mapped = toAppError(failure!);
      expect(mapped.statusCode, String(failure)).toBe(503);
      expect(mapped.headers['retry-after']).toBe('2');
    });

  });
}, ['postgres']); // PGlite has one backend: no other session's backend to terminate.
