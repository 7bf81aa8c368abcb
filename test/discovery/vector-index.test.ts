import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';

import { rowsOf, type SqlSession } from '../../src/db/client.js';
import { ensureVectorIndex, indexBuildMemoryMb, vectorIndexName } from '../../src/embedding/vector-index.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { type DiscoverResponse, useDiscoveryApp } from './helpers.js';

const VERBS = ['create', 'delete', 'list', 'export', 'archive', 'approve'];
const OBJECTS = ['invoice', 'ticket', 'shipment', 'employee', 'dashboard', 'contract', 'device', 'campaign', 'budget', 'meeting'];
const QUERIES = ['export the invoice', 'approve a contract', 'delete that device', 'list my meetings', 'archive campaign budget', 'new ticket please'];

/** The strategy counters of tool_registry_discovery_vector_search_total, from /metrics. */
async function vectorSearches(app: Parameters<typeof call>[0]): Promise<Record<string, number>> {
  const text = (await call(app, 'GET', '/metrics')).body;
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(/^tool_registry_discovery_vector_search_total\{strategy="(\w+)"\} (\d+)/gm)) counts[match[1]!] = Number(match[2]);
  return counts;
}

forEachDatabase((db) => {
  describe('vector search through the HNSW index', () => {
    // Every discovery here must reach the vector leg: no shortlist cache.
    const indexed = useDiscoveryApp(db, () => new HashingEmbedder(), { VECTOR_INDEX_MIN_TOOLS: '0', DISCOVERY_CACHE_MB: '0' });
    const exact = useDiscoveryApp(db, () => new HashingEmbedder(), { VECTOR_INDEX_MIN_TOOLS: '1000000' });
    const tenant = uniqueTenant('hnsw');

    it('builds the model index and ranks as the exact search does, hidden tools excluded', async () => {
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      // 60 visible tools with 4 vectors each (card, 2 aliases, 1 example): more than the index scan asks for.
      for (const verb of VERBS) {
        for (const object of OBJECTS) {
          const doc = toolDocument({
            name: `${verb}_${object}`,
            description: `${verb} a ${object} record for the team.`,
            summary: undefined,
            aliases: [`${verb} my ${object}`, `${object} ${verb}`],
            examples: [`please ${verb} the ${object} from last week`],
          });
          expect((await call(indexed.app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
          // The index is built after the first tool (PGlite answers 503 meanwhile): let it finish.
          if (verb === VERBS[0] && object === OBJECTS[0]) await indexed.flush();
        }
      }
      // Closer matches the caller may not use.
      for (const query of QUERIES) {
        const doc = toolDocument({ name: `admin_${query.replace(/\W+/g, '_')}`, description: query, summary: undefined, aliases: [query], examples: [], required_scopes: ['ops:admin'] });
        expect((await call(indexed.app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
      }
      await indexed.flush();
      await exact.flush();
      const [index] = await rowsOf<{ valid: boolean }>(
        db.database.db.execute(sql`select i.indisvalid as valid from pg_class c join pg_index i on i.indexrelid = c.oid where c.relname = ${vectorIndexName('test-hashing-64', 64)}`),
      );
      expect(index?.valid).toBe(true);

      const caller = await token({ tenant, scopes: [] });
      const before = await vectorSearches(indexed.app);
      for (const query of QUERIES) {
        const ask = (app: typeof indexed.app, mode: string) =>
          call(app, 'POST', '/v1/discover', { token: caller, body: { query, top_k: 5, mode } }).then((r) => r.json<DiscoverResponse>().tools.map((t) => t.name));
        const [viaIndex, viaScan] = [await ask(indexed.app, 'vector'), await ask(exact.app, 'vector')];
        expect(viaIndex, query).toEqual(viaScan);
        expect(viaIndex.some((name) => name.startsWith('admin_')), query).toBe(false);
        expect((await ask(indexed.app, 'hybrid'))[0], query).toBe((await ask(exact.app, 'hybrid'))[0]);
      }
      const after = await vectorSearches(indexed.app);
      expect((after.index ?? 0) - (before.index ?? 0)).toBe(2 * QUERIES.length);
      expect(after.index_fallback ?? 0).toBe(before.index_fallback ?? 0);
    }, 120_000);

    it('serves concurrent index searches on every pooled connection', async () => {
      // Regression: a transaction per search (for SET LOCAL) deadlocked pglite-socket's multiplexer.
      const caller = await token({ tenant, scopes: [] });
      const before = await vectorSearches(indexed.app);
      const responses = await Promise.all(
        Array.from({ length: 12 }, (_, i) => call(indexed.app, 'POST', '/v1/discover', { token: caller, body: { query: QUERIES[i % QUERIES.length]!, mode: 'vector' } })),
      );
      expect(responses.map((r) => r.statusCode)).toEqual(Array(12).fill(200));
      const after = await vectorSearches(indexed.app);
      expect((after.index ?? 0) - (before.index ?? 0)).toBe(12);
    }, 60_000);

    it('falls back to the exact search when too few vectors pass the filter', async () => {
      // A small tenant in the shared index: its 4 vectors cannot fill the scan's 200.
      const small = uniqueTenant('hnsw-small');
      const doc = toolDocument({ name: 'audit_ledger', description: 'Audit the ledger.', summary: undefined, required_scopes: ['finance:audit'] });
      expect((await call(indexed.app, 'POST', '/v1/tools', { token: await token({ tenant: small, scopes: [PUBLISH] }), body: doc })).statusCode).toBe(201);
      await indexed.flush();
      const before = await vectorSearches(indexed.app);
      const auditor = await token({ tenant: small, scopes: ['finance:audit'] });
      const found = await call(indexed.app, 'POST', '/v1/discover', { token: auditor, body: { query: 'audit the ledger', mode: 'vector' } });
      expect(found.json<DiscoverResponse>().tools.map((t) => t.name)).toEqual(['audit_ledger']);
      const outsider = await token({ tenant: small, scopes: [] });
      const hidden = await call(indexed.app, 'POST', '/v1/discover', { token: outsider, body: { query: 'audit the ledger', mode: 'vector' } });
      expect(hidden.json<DiscoverResponse>().tools).toEqual([]);
      const after = await vectorSearches(indexed.app);
      expect((after.index_fallback ?? 0) - (before.index_fallback ?? 0)).toBe(2);
    }, 60_000);
  });
});

forEachDatabase((db) => {
  describe('when the HNSW index is built', () => {
    const ctx = useDiscoveryApp(db, () => new HashingEmbedder(), { VECTOR_INDEX_MIN_TOOLS: '5' });
    const indexExists = async () =>
      (await rowsOf(db.database.db.execute(sql`select 1 from pg_class where relname = ${vectorIndexName('test-hashing-64', 64)}`))).length === 1;

    it('only once some tenant has VECTOR_INDEX_MIN_TOOLS active tools', async () => {
      const publisher = await token({ tenant: uniqueTenant('hnsw-threshold'), scopes: [PUBLISH] });
      const publish = async (i: number) =>
        expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: toolDocument({ name: `tool_${i}` }) })).statusCode).toBe(201);
      for (let i = 0; i < 4; i += 1) await publish(i);
      await ctx.flush();
      expect(await indexExists()).toBe(false);
      await publish(4);
      await ctx.flush();
      expect(await indexExists()).toBe(true);
    });
  });
});

describe('the memory of an HNSW build', () => {
  it('is sized to the vectors, never under PostgreSQL’s 64 MiB default nor over the configured maximum', () => {
    expect(indexBuildMemoryMb(1_000, 384, 1024)).toBe(64);
    // 200,000 vectors of 384 dimensions: (1,536 + 800) bytes each, a quarter more for headroom.
    expect(indexBuildMemoryMb(200_000, 384, 1024)).toBe(557);
    expect(indexBuildMemoryMb(1_000_000, 384, 1024)).toBe(1024);
    expect(indexBuildMemoryMb(1_000_000, 384, 64)).toBe(64);
  });
});

forEachDatabase((db) => {
  describe('the HNSW build session', () => {
    const model = 'build-session-8';
    const tenant = uniqueTenant('hnsw-session');

    it('sets its memory on one reserved connection and gives the connection back as it found it', async () => {
      const executor = db.database.db;
      await executor.execute(sql`
        insert into tools (tenant_id, name, version, revision, summary, description, sensitivity, document, content_hash, token_costs,
                           search_name, search_card, search_body, search_params, required_scopes)
        select ${tenant}, 'tool_' || i, '1.0.0', 1, 'summary', 'description', 'low', '{}'::jsonb, md5(i::text), '{"openai": 10}'::jsonb,
               'tool ' || i, '', 'description', '', '{}'::text[]
        from generate_series(1, 20) i`);
      await executor.execute(sql`
        insert into tool_embeddings (tool_id, tenant_id, model, ord, dims, content_hash, embedding)
        select t.id, t.tenant_id, ${model}, 0, 8, '', (select array_agg(cos(t.id * 3 + d)) from generate_series(1, 8) d)::vector
        from tools t where t.tenant_id = ${tenant}`);
      const seen: string[][] = [];
      const build = {
        concurrently: db.database.concurrentIndexBuild,
        maxMemoryMb: 512,
        withSession: <T>(fn: (session: SqlSession) => Promise<T>) =>
          db.database.withSession(async (session) => {
            // Something else than what the build asks for, to see its SET take effect.
            await session.exec("set maintenance_work_mem = '100MB'");
            return fn({
              exec: async (text) => {
                await session.exec(text);
                // Each statement, and what the build's own connection holds after it.
                const [row] = await session.query<{ memory: string }>("select current_setting('maintenance_work_mem') as memory");
                seen.push([text.trim().split(/\s/)[0]!, row!.memory]);
              },
              query: session.query,
            });
          }),
      };
      expect(await ensureVectorIndex(executor, model, build, { info: () => undefined })).toBe(true);
      // 64 MiB for 20 vectors, the create under it, then back to the server's default.
      expect(seen).toEqual([
        ['set', '64MB'],
        ['create', '64MB'],
        ['reset', '64MB'],
      ]);
      const [index] = await rowsOf<{ valid: boolean }>(
        executor.execute(sql`select i.indisvalid as valid from pg_class c join pg_index i on i.indexrelid = c.oid where c.relname = ${vectorIndexName(model, 8)}`),
      );
      expect(index?.valid).toBe(true);
    }, 60_000);

    it('runs every statement of fn on the same connection, while other queries use the pool', async () => {
      const settings = await db.database.withSession(async (session) => {
        await session.exec("set application_name = 'index-build'");
        // Other callers meanwhile: on a pool they take the other connections, not this one.
        await Promise.all(Array.from({ length: 12 }, () => db.database.db.execute(sql`select pg_sleep(0.01)`)));
        const [row] = await session.query<{ name: string }>("select current_setting('application_name') as name");
        await session.exec('reset application_name');
        return row?.name;
      });
      expect(settings).toBe('index-build');
    });
  });
});
