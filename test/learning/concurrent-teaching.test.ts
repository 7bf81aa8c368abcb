import { randomUUID } from 'node:crypto';

import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';

import { type Database, rowsOf } from '../../src/db/client.js';
import * as repo from '../../src/learning/repository.js';
import { ToolService } from '../../src/tools/service.js';
import { ToolValidator } from '../../src/tools/validation.js';
import { type DatabaseHandle, forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';

const LIMITS = { enabled: true, minSubjects: 2, maxPerTool: 20, ttlDays: 30, votesPerHour: 1000, defaultMode: 'hybrid' as const, auditLogDays: 0 };
const validator = new ToolValidator({ descriptionLength: 1024, summaryLength: 200, schemaDepth: 32 });

/** Publishes one tool in `tenant`; returns its id. */
async function publishLedgerTool(database: Database, tenant: string): Promise<number> {
  const document = validator.validate(toolDocument({ name: 'reconcile_ledger', description: 'Match ledger entries against bank lines.', aliases: [], examples: [], side_effects: false, sensitivity: 'low' }));
  if (!document.ok) throw new Error('fixture invalid');
  return (await new ToolService(database.db).register({ tenant, subject: null, scopes: [] }, document.document)).row.id;
}

/**
 * Two transactions that teach one tool at once must both end up in its indexed learned text. The
 * second waits for the first's lock on the tool's row; its text must be computed after that wait,
 * from what the first committed, not from what it saw before. On native PostgreSQL the second
 * really waits (checked in pg_stat_activity); PGlite runs one transaction at a time.
 */
forEachDatabase((db: DatabaseHandle) => describe('teaching one tool concurrently', () => {
  it("keeps both transactions' aliases in the learned text", async () => {
    const { database } = db.current;
    const tenant = `concurrent-${randomUUID()}`;
    const toolId = await publishLedgerTool(database, tenant);
    const vote = (query: string, subject: string) => ({ toolId, tenantId: tenant, query, subject, discoveryId: randomUUID() });
    // Each alias has one subject: a second one makes it rank (minSubjects 2) and changes the text.
    for (const query of ['month end close', 'bank statement match']) await database.db.transaction((tx) => repo.teach(tx, vote(query, 'user-1'), LIMITS));

    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let firstTaught!: () => void;
    const taught = new Promise<void>((resolve) => (firstTaught = resolve));
    let firstPid = 0;
    const first = database.db.transaction(async (tx) => {
      await repo.teach(tx, vote('month end close', 'user-2'), LIMITS);
      firstPid = (await rowsOf<{ pid: number }>(tx.execute(sql`select pg_backend_pid() as pid`)))[0]!.pid;
      firstTaught();
      await gate;
    });
    await taught;
    const second = database.db.transaction((tx) => repo.teach(tx, vote('bank statement match', 'user-2'), LIMITS));
    if (db.leg === 'postgres') {
      // The second transaction must be waiting for the first's row lock before the first commits
      // (other test files share this server: only sessions the first one blocks count).
      const waiting = async () =>
        (await rowsOf<{ n: number }>(database.db.execute(sql`select count(*)::int as n from pg_stat_activity where ${firstPid}::int = any(pg_blocking_pids(pid))`)))[0]!.n;
      for (let i = 0; i < 500 && (await waiting()) === 0; i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await waiting()).toBe(1);
    }
    release();
    await first;
    await second;
    const [row] = await rowsOf<{ text: string }>(database.db.execute(sql`select search_learned as text from tools where id = ${toolId}`));
    expect(row!.text.split('\n').sort()).toEqual(['bank statement match', 'month end close']);
  });
}));

/**
 * Two transactions that each add an alias (a row referencing the tool: a KEY SHARE lock on it)
 * and then refresh the tool's learned text must not deadlock. The refresh's row lock must be
 * NO KEY UPDATE: FOR UPDATE waits for the other's KEY SHARE while the other's waits for this one's.
 * Native PostgreSQL only: PGlite runs one transaction at a time.
 */
forEachDatabase(
  (db: DatabaseHandle) =>
    describe('refreshing learned text beside other inserts', () => {
      it('does not deadlock', async () => {
        const { database } = db.current;
        const tenant = `deadlock-${randomUUID()}`;
        const toolId = await publishLedgerTool(database, tenant);
        const gates = [0, 1].map(() => {
          let open!: () => void;
          let inserted!: () => void;
          return { opened: new Promise<void>((resolve) => (open = resolve)), open: () => open(), done: new Promise<void>((resolve) => (inserted = resolve)), inserted: () => inserted() };
        });
        const teacher = (i: number) =>
          database.db.transaction(async (tx) => {
            await tx.execute(sql`insert into learned_aliases (tool_id, tenant_id, query, misses, last_seen) values (${toolId}, ${tenant}, ${`phrase ${i}`}, 1, now())`);
            gates[i]!.inserted();
            await gates[i]!.opened;
            await repo.refreshLearnedText(tx, toolId, LIMITS);
          });
        const first = teacher(0);
        await gates[0]!.done;
        const second = teacher(1);
        await gates[1]!.done;
        // Both hold a KEY SHARE lock on the tool's row now; both refresh.
        gates[0]!.open();
        gates[1]!.open();
        await expect(Promise.all([first, second])).resolves.toEqual([undefined, undefined]);
      });
    }),
  ['postgres'],
);
