import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, describe, expect, inject, it } from 'vitest';

import { type Database, fromPglite, openPostgres, rowsOf } from '../../src/db/client.js';
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate.js';
import { ToolService } from '../../src/tools/service.js';
import { ToolValidator } from '../../src/tools/validation.js';
import { buildTestApp, call, testConfig } from '../helpers/app.js';
import { toolDocument } from '../helpers/fixtures.js';
import { execute } from '../helpers/replica.js';
import { PUBLISH, token } from '../helpers/tokens.js';

/**
 * Migrations 0007 (tenant-inclusive keys), 0012 (catalog revisions) and 0015 (numbered scope sets
 * on postings) applied to a database that already holds data written under 0001-0006: nothing is
 * lost, vectors take their tool's tenant, a child row with a stray tenant is realigned, postings
 * carry their tool's scope set, and the service runs on the result.
 * On fresh PGlite in-process and on a fresh schema of the external PostgreSQL (pglite-socket is
 * the same engine as the first, so it adds nothing here).
 */

// 0013 (canonical tool names) is independent of 0007 and 0012, and today's tool service needs it.
const BEFORE = readdirSync(MIGRATIONS_DIR).filter((f) => /^(000[1-6]|0013)_.*\.sql$/.test(f)).sort();

// Beside the tools (registered through the tool service on 0001-0006 and 0013): a vector,
// usage, a learned alias and a discovery, as the 0006 schema stored them. Beta's usage row
// carries a stray tenant, which 0007 must realign rather than fail on.
const SEED = [
  `insert into tool_embeddings (tool_id, model, ord, dims, content_hash, embedding) select id, 'model-x', 0, 3, 'stamp', '[1,0,0]' from tools`,
  `insert into tool_usage (tool_id, tenant_id, calls) select id, case when tenant_id = 'beta' then 'stray' else tenant_id end, 7 from tools where name = 'issue_refund'`,
  `insert into learned_aliases (tool_id, tenant_id, query, misses) select id, tenant_id, 'give money back', 3 from tools`,
  `insert into discovery_log (id, tenant_id, query, top_k, format, shortlist, search_mode, low_confidence, withheld, latency_ms)
   values ('00000000-0000-4000-8000-000000000001', 'alpha', 'refund', 3, 'openai', '[]', 'lexical', false, 0, 1.5)`,
];

// Today's tool service writes postings with a scope-set number (0015) and a tool's sync source
// (0019): for the seed, the old schema gets that table and those columns, and loses them again
// once the postings carry their scopes the 0006 way.
const POSTINGS_0015 = [
  `create table scope_sets (id integer generated always as identity primary key, tenant_id text not null, scopes text[] not null, unique (tenant_id, scopes))`,
  `alter table tool_terms add column scope_set integer`,
  `alter table tools add column source text`,
];
const POSTINGS_0006 = [
  `update tool_terms p set required_scopes = s.scopes from scope_sets s where s.id = p.scope_set`,
  `alter table tool_terms drop column scope_set`,
  `drop table scope_sets`,
  `alter table tools drop column source`,
];

async function seed(database: Database): Promise<void> {
  const validator = new ToolValidator(testConfig().limits);
  const tools = new ToolService(database.db);
  for (const statement of POSTINGS_0015) await database.db.execute(statement);
  for (const [tenant, name, scopes] of [['alpha', 'issue_refund', []], ['beta', 'issue_refund', []], ['beta', 'void_invoice', ['billing:write']]] as const) {
    const result = validator.validate(toolDocument({ name, required_scopes: [...scopes] }));
    if (!result.ok) throw new Error(JSON.stringify(result.issues));
    await tools.register({ tenant, subject: 'ci', scopes: [PUBLISH] }, result.document);
  }
  for (const statement of POSTINGS_0006) await database.db.execute(statement);
  for (const statement of SEED) await database.db.execute(statement);
}

const COUNTED = ['tools', 'tool_versions', 'tool_terms', 'tool_embeddings', 'tool_usage', 'learned_aliases', 'audit_log', 'discovery_log'];

async function counts(database: Database): Promise<Record<string, number>> {
  const result: Record<string, number> = {};
  for (const table of COUNTED) {
    const [row] = await rowsOf<{ n: number }>(database.db.execute(`select count(*)::int as n from ${table}`));
    result[table] = row!.n;
  }
  return result;
}

function migrationsBefore(): string {
  const dir = mkdtempSync(join(tmpdir(), 'registry-0006-'));
  mkdirSync(dir, { recursive: true });
  for (const file of BEFORE) copyFileSync(join(MIGRATIONS_DIR, file), join(dir, file));
  return dir;
}

async function upgradeScenario(database: Database): Promise<void> {
  const old = migrationsBefore();
  try {
    await migrate(database, old);
  } finally {
    rmSync(old, { recursive: true, force: true });
  }
  await seed(database);
  const before = await counts(database);

  expect(await migrate(database)).toEqual(readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql') && !BEFORE.includes(f)).map((f) => f.replace(/\.sql$/, '')).sort());
  expect(await counts(database)).toEqual(before);
  const strays = await rowsOf<{ table: string; n: number }>(
    database.db.execute(`
      select 'tool_embeddings' as table, count(*)::int as n from tool_embeddings e join tools t on t.id = e.tool_id where e.tenant_id is distinct from t.tenant_id
      union all select 'tool_usage', count(*)::int from tool_usage u join tools t on t.id = u.tool_id where u.tenant_id <> t.tenant_id`),
  );
  expect(strays).toEqual([{ table: 'tool_embeddings', n: 0 }, { table: 'tool_usage', n: 0 }]);
  // 0015: every posting carries its tool's scope set, numbered per tenant.
  const postingScopes = await rowsOf<{ name: string; scopes: string[]; n: number }>(
    database.db.execute(`
      select t.tenant_id || '/' || t.name as name, s.scopes, count(*)::int as n
      from tool_terms p join tools t on t.id = p.tool_id join scope_sets s on s.id = p.scope_set and s.tenant_id = p.tenant_id
      group by 1, 2 order by 1`),
  );
  expect(postingScopes.map(({ name, scopes }) => [name, scopes])).toEqual([
    ['alpha/issue_refund', []],
    ['beta/issue_refund', []],
    ['beta/void_invoice', ['billing:write']],
  ]);
  expect(postingScopes.reduce((n, row) => n + row.n, 0)).toBe(before.tool_terms);
  const keys = await rowsOf<{ table: string; definition: string }>(
    database.db.execute(`
      select conrelid::regclass::text as table, pg_get_constraintdef(oid) as definition from pg_constraint
      where contype in ('p', 'u', 'f') and conrelid = any(array['tools', 'tool_versions', 'tool_terms', 'tool_embeddings', 'audit_log', 'discovery_log', 'tool_usage', 'learned_aliases', 'catalog_revisions']::regclass[])`),
  );
  for (const key of keys) expect(key.definition, `${key.table}: ${key.definition}`).toMatch(/tenant_id/);
  expect(keys.filter((k) => k.definition.startsWith('FOREIGN KEY')).map((k) => k.table).sort()).toEqual(['learned_aliases', 'tool_embeddings', 'tool_terms', 'tool_usage', 'tool_versions']);

  // The service runs on the upgraded data: authorize counts a call onto the existing usage row
  // (the new conflict key), and a change bumps the tenant's catalog revision.
  const app = await buildTestApp({ database });
  try {
    const agent = await token({ tenant: 'beta', scopes: [] });
    // The lexical leg filters the migrated postings by scope set.
    const lexical = async (scopes: string[]) =>
      (await call(app, 'POST', '/v1/discover', { token: await token({ tenant: 'beta', scopes }), body: { query: 'void invoice refund', mode: 'lexical', top_k: 5 } }))
        .json<{ tools: { name: string }[] }>()
        .tools.map((t) => t.name)
        .sort();
    // Only visibility is asserted: which of two matching tools clears the score floor is ranking's business.
    expect(await lexical([])).toEqual(['issue_refund']);
    expect(await lexical(['billing:write'])).toContain('void_invoice');
    const decision = await call(app, 'POST', '/v1/authorize', { token: agent, body: { tool: 'issue_refund', arguments: { invoice_id: 'inv_1' } } });
    expect(decision.json()).toMatchObject({ decision: 'allow' });
    const [usage] = await rowsOf<{ calls: number }>(database.db.execute(`select u.calls::int as calls from tool_usage u join tools t on t.id = u.tool_id and t.tenant_id = u.tenant_id where t.tenant_id = 'beta' and t.name = 'issue_refund'`));
    expect(usage?.calls).toBe(8);
    const publisher = await token({ tenant: 'beta', scopes: [PUBLISH] });
    expect((await call(app, 'DELETE', '/v1/tools/void_invoice', { token: publisher })).statusCode).toBe(200);
    const [revision] = await rowsOf<{ revision: number }>(database.db.execute(`select revision::int as revision from catalog_revisions where tenant_id = 'beta'`));
    expect(revision?.revision).toBeGreaterThan(0);
    const [alpha] = await rowsOf<{ n: number }>(database.db.execute(`select count(*)::int as n from catalog_revisions where tenant_id = 'alpha'`));
    expect(alpha?.n).toBe(0);
  } finally {
    await app.close();
  }
}

describe('migrations 0007, 0012 and 0015 on existing data', () => {
  it('on PGlite in-process (a fresh database, initdb included)', async () => {
    const client = await PGlite.create({ extensions: { vector } });
    try {
      await upgradeScenario(fromPglite(client));
    } finally {
      await client.close();
    }
  }, 60_000);

  const external = inject('externalPostgres');
  const schema = `upgrade_${Date.now().toString(36)}`;
  afterAll(async () => {
    if (external.url !== null) await execute(external.url, `drop schema if exists ${schema} cascade`);
  });
  it.skipIf(external.url === null)(`on PostgreSQL + pgvector (${external.url === null ? `SKIPPED, ${external.source}` : external.source})`, async () => {
    await execute(external.url!, `create schema ${schema}`);
    const url = new URL(external.url!);
    url.searchParams.set('options', `-c search_path=${schema},public`);
    const database = await openPostgres(url.toString(), 2);
    try {
      await upgradeScenario(database);
    } finally {
      await database.close();
    }
  }, 60_000);
});
