import { randomUUID } from 'node:crypto';

import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';

import { rowsOf } from '../../src/db/client.js';
import * as repo from '../../src/learning/repository.js';
import { LearningService } from '../../src/learning/service.js';
import { ToolService } from '../../src/tools/service.js';
import { ToolValidator } from '../../src/tools/validation.js';
import { type DatabaseHandle, forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';

const LIMITS = { enabled: true, minSubjects: 2, maxPerTool: 20, ttlDays: 30, votesPerHour: 1000, defaultMode: 'hybrid' as const, auditLogDays: 0 };
const validator = new ToolValidator({ descriptionLength: 1024, summaryLength: 200, schemaDepth: 32 });

/**
 * The hourly ageing of learned aliases (LearningService.expire): votes past the TTL go, aliases
 * left without votes go (rejected ones stay, so they are not taught again), and the tools' indexed
 * text and postings follow; tool by tool, each in a transaction of its own. Every leg.
 */
forEachDatabase((db: DatabaseHandle) => describe('learned-alias expiry', () => {
  let database: DatabaseHandle['current'];
  const ids: Record<string, number> = {};

  const publish = async (tenant: string, name: string): Promise<number> => {
    const result = validator.validate(toolDocument({ name, description: 'Match ledger entries against bank lines.', aliases: [], examples: [], side_effects: false, sensitivity: 'low' }));
    if (!result.ok) throw new Error('fixture invalid');
    return (await new ToolService(database.database.db).register({ tenant, subject: null, scopes: [] }, result.document)).row.id;
  };
  /** `query` taught to the tool by two subjects (enough to rank). */
  const teach = async (tenant: string, toolId: number, query: string): Promise<void> => {
    for (const subject of ['user-1', 'user-2']) {
      await database.database.db.transaction((tx) => repo.teach(tx, { toolId, tenantId: tenant, query, subject, discoveryId: randomUUID() }, LIMITS));
    }
  };
  const learnedText = async (toolId: number): Promise<string> =>
    (await rowsOf<{ text: string }>(database.database.db.execute(sql`select search_learned as text from tools where id = ${toolId}`)))[0]!.text;
  const count = async (query: ReturnType<typeof sql>): Promise<number> => (await rowsOf<{ n: number }>(database.database.db.execute(query)))[0]!.n;

  beforeAll(async () => {
    database = db.current;
    ids.aged = await publish('expiry-a', 'reconcile_ledger');
    await teach('expiry-a', ids.aged, 'month end close');
    await teach('expiry-a', ids.aged, 'junk words');
    const [junk] = await rowsOf<{ id: number }>(database.database.db.execute(sql`select id from learned_aliases where query = 'junk words'`));
    await repo.reviewLearned(database.database.db, ids.aged, Number(junk!.id), 'rejected', 'publisher');
    await repo.refreshLearnedText(database.database.db, ids.aged, LIMITS);
    ids.live = await publish('expiry-b', 'reconcile_ledger');
    await teach('expiry-b', ids.live, 'month end close');
    ids.stuck = await publish('expiry-d', 'stuck_tool');
    await teach('expiry-d', ids.stuck, 'stuck phrase');
    // Aliases without any vote: one untaught for longer than the TTL goes, a recent one stays.
    ids.orphan = await publish('expiry-e', 'orphan_tool');
    await database.database.db.execute(sql`insert into learned_aliases (tool_id, tenant_id, query, misses, last_seen) values
      (${ids.orphan}, 'expiry-e', 'long forgotten', 1, now() - interval '31 days'), (${ids.orphan}, 'expiry-e', 'recently seen', 1, now())`);
    // Many tools at once.
    for (let i = 0; i < 120; i += 1) await teach('expiry-c', await publish('expiry-c', `tool_${i}`), `phrase number ${i}`);
    await database.database.db.execute(sql`update learned_alias_votes set at = now() - interval '31 days' where tenant_id in ('expiry-a', 'expiry-c', 'expiry-d')`);
    await database.database.db.execute(sql`update learned_aliases set last_seen = now() - interval '31 days' where tenant_id in ('expiry-a', 'expiry-c', 'expiry-d')`);
    // One tool's transaction fails (its indexed text cannot be written) until the test lifts it.
    await database.database.db.execute(sql`create function refuse_stuck_tool() returns trigger language plpgsql as $$ begin raise exception 'stuck tool'; end $$`);
    await database.database.db.execute(sql.raw(`create trigger refuse_stuck_tool before update of search_learned on tools for each row when (old.id = ${ids.stuck}) execute function refuse_stuck_tool()`));
  }, 120_000);

  it('removes what is past the TTL, tool by tool, and only that', async () => {
    expect(await learnedText(ids.aged!)).toBe('month end close');
    expect(await count(sql`select count(*)::int as n from tool_terms where tool_id = ${ids.aged!} and lexeme = 'month'`)).toBe(1);
    let changed = 0;
    const learning = new LearningService(database.database.db, LIMITS, () => (changed += 1));

    // The stuck tool fails its own transaction only: every other tool is done, then the failure surfaces.
    const failure = await learning.expire().then(() => undefined, (error: Error) => error);
    expect(String(failure?.cause ?? failure)).toMatch(/stuck tool/);
    expect(changed).toBe(1);
    expect(await learnedText(ids.stuck!)).toBe('stuck phrase');
    // The aged tool: its alias and votes gone, its indexed text and postings too; the rejected alias stays.
    expect(await learnedText(ids.aged!)).toBe('');
    expect(await count(sql`select count(*)::int as n from tool_terms where tool_id = ${ids.aged!} and lexeme = 'month'`)).toBe(0);
    expect((await rowsOf<{ query: string }>(database.database.db.execute(sql`select query from learned_aliases where tenant_id = 'expiry-a'`))).map((r) => r.query)).toEqual(['junk words']);
    expect(await count(sql`select count(*)::int as n from learned_alias_votes where tenant_id in ('expiry-a', 'expiry-c')`)).toBe(0);
    expect(await count(sql`select count(*)::int as n from learned_alias_votes where tenant_id = 'expiry-d'`)).toBe(2);
    expect(await count(sql`select count(*)::int as n from learned_aliases where tenant_id = 'expiry-c'`)).toBe(0);
    expect((await rowsOf<{ query: string }>(database.database.db.execute(sql`select query from learned_aliases where tenant_id = 'expiry-e'`))).map((r) => r.query)).toEqual(['recently seen']);
    // Another tenant's live alias is untouched.
    expect(await learnedText(ids.live!)).toBe('month end close');
    expect(await count(sql`select count(*)::int as n from learned_alias_votes where tenant_id = 'expiry-b'`)).toBe(2);
    // The next run takes the stuck tool once it can be written, and then nothing is left.
    await database.database.db.execute(sql`drop trigger refuse_stuck_tool on tools`);
    expect(await learning.expire()).toBe(1);
    expect(await learnedText(ids.stuck!)).toBe('');
    expect(changed).toBe(2);
    expect(await learning.expire()).toBe(0);
    expect(changed).toBe(2);
  });
}));
