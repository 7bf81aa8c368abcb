import { param, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';

import { rowsOf } from '../../src/db/client.js';
import { catalogStats, lexicalCandidates, type RetrievalRequest, retrieveCandidates, vectorStatement } from '../../src/discovery/repository.js';
import { ensureVectorIndex, vectorIndexName } from '../../src/embedding/vector-index.js';
import { BM25_PARAMS } from '../../src/tools/lexical/bm25f.js';
import { forEachDatabase } from '../helpers/databases.js';
import { uniqueTenant } from '../helpers/tokens.js';

const MODEL = 'plan-test-16';
const DIMS = 16;
const TOOLS = 3000;

/**
 * The vector leg's plan on every driver: with a large visible catalog it must walk the HNSW index
 * (iterative scan), whatever the planner estimates for the scope filter. The trap it guards
 * against: with most tools needing no scope, PostgreSQL estimated `required_scopes <@ '{...}'` at
 * 0.5% of the rows and drove a nested loop from the tools, computing every distance.
 */
forEachDatabase((db) => {
  describe('the vector leg plan', () => {
    const tenant = uniqueTenant('plan');
    const vector = Array.from({ length: DIMS }, (_, i) => Math.sin(i + 1));

    beforeAll(async () => {
      const executor = db.database.db;
      // Tools straight into the table (the plan, not publishing, is under test): every 10th needs a scope.
      await executor.execute(sql`
        insert into tools (tenant_id, name, version, revision, summary, description, sensitivity, document, content_hash, token_costs,
                           search_name, search_card, search_body, search_params, required_scopes)
        select ${tenant}, 'tool_' || i, '1.0.0', 1, 'summary', 'description', 'low', '{}'::jsonb, md5(i::text), '{"openai": 10}'::jsonb,
               'tool ' || i, '', 'description', '', case when i % 10 = 0 then array['ops:admin'] else '{}'::text[] end
        from generate_series(1, ${TOOLS}) i`);
      await executor.execute(sql`
        insert into tool_embeddings (tool_id, tenant_id, model, ord, dims, content_hash, embedding)
        select t.id, t.tenant_id, ${MODEL}, 0, ${DIMS}, '', (select array_agg(sin(t.id * 7 + d)) from generate_series(1, ${DIMS}) d)::vector
        from tools t where t.tenant_id = ${tenant}`);
      // The service's own build: concurrently where the driver allows it, on a reserved session.
      const build = { concurrently: db.database.concurrentIndexBuild, withSession: db.database.withSession, maxMemoryMb: 256 };
      expect(await ensureVectorIndex(executor, MODEL, build, { info: () => undefined })).toBe(true);
      await executor.execute(sql`analyze tools`);
      await executor.execute(sql`analyze tool_embeddings`);
    }, 120_000);

    const request = async (scopes: string[]): Promise<RetrievalRequest> => ({
      visibility: { tenantId: tenant, scopes, includeRetired: false },
      filters: {},
      text: 'nothing lexical here',
      nameTokens: [],
      stats: await catalogStats(db.database.db, tenant, scopes),
      bm25: BM25_PARAMS,
      vector: { model: MODEL, values: vector, search: 'index' },
      depth: 100,
    });

    const plan = async (scopes: string[]): Promise<string> => {
      const retrieval = await request(scopes);
      const lexical = await lexicalCandidates(db.database.db, retrieval);
      const rows = await rowsOf<Record<string, string>>(db.database.db.execute(sql`explain ${vectorStatement({ ...retrieval, vector: retrieval.vector! }, lexical)}`));
      return rows.map((r) => Object.values(r)[0]).join('\n');
    };

    it.each([
      ['a caller without scopes (most tools visible)', []],
      ['a caller with a scope most tools do not need', ['billing:read']],
      ['a caller who sees everything', ['ops:admin']],
    ])('walks the HNSW index for %s', async (_, scopes) => {
      const text = await plan(scopes);
      expect(text).toContain(`Index Scan using ${vectorIndexName(MODEL, DIMS)}`);
      expect(text).not.toMatch(/Seq Scan on tool_embeddings/);
    });

    it('returns the nearest visible tools through the index, never a hidden one', async () => {
      const { candidates, vectorSearch } = await retrieveCandidates(db.database.db, await request([]));
      expect(vectorSearch).toBe('index');
      const ids = candidates.map((c) => c.toolId);
      expect(ids.length).toBe(100);
      const [hidden] = await rowsOf<{ n: number }>(db.database.db.execute(sql`select count(*)::int as n from tools where id = any(${param(ids)}::bigint[]) and required_scopes <> '{}'`));
      expect(hidden!.n).toBe(0);
      // The same tools the exact search finds.
      const exact = await retrieveCandidates(db.database.db, { ...(await request([])), vector: { model: MODEL, values: vector, search: 'exact' } });
      const best = (list: typeof candidates) => [...list].sort((a, b) => (b.cosine ?? 0) - (a.cosine ?? 0)).slice(0, 10).map((c) => c.toolId);
      expect(best(candidates)).toEqual(best(exact.candidates));
    });
  });
});
