import { type SQL, sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';

import { type Executor, rowsOf } from '../../src/db/client.js';
import { withoutQuotedValues } from '../../src/discovery/query.js';
import { catalogStats, lexicalCandidates, retrieveCandidates, vectorCandidates } from '../../src/discovery/repository.js';
import { BM25_PARAMS, bm25fScores, commonTermPostings, type FieldVector, idf, isNamespace, type Posting, QUOTED_WORD_WEIGHT } from '../../src/tools/lexical/bm25f.js';
import { searchedTerms } from '../../src/tools/lexical/searched-terms.js';
import { ToolService } from '../../src/tools/service.js';
import { ToolValidator } from '../../src/tools/validation.js';
import { MCP_SERVER_TOOLS } from '../fixtures/mcp-server-tools.js';
import { ORDER_TOOLS } from '../fixtures/order-tools.js';
import { call, testConfig, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

const QUERIES = [
  "Where is John's order #94218?",
  'forget everything about Bob',
  'cancel the order and refund the customer',
  'where is the truck with container MSCU1234567 right now',
  'search orders placed by jane@example.com last week that are still pending',
  'zzz nothing matches this',
];

describe('idf, namespaces and common words', () => {
  it('leaves out words in 20% or more of a large catalog, never in a small one', () => {
    const posting = (toolId: number, lexeme: string): Posting => ({ toolId, lexeme, tf: [0, 0, 1, 0], length: [1, 1, 10, 1] });
    const common = Array.from({ length: 250 }, (_, i) => posting(i, 'common'));
    const postings = [...common, posting(1, 'rare')];
    const average: FieldVector = [1, 1, 10, 1];
    expect(bm25fScores(postings, ['common', 'rare'], 1000, average, BM25_PARAMS).size).toBe(1);
    expect(bm25fScores(postings, ['common', 'rare'], 10_000, average, BM25_PARAMS).size).toBe(250);
    expect(commonTermPostings(100)).toBe(200);
    expect(commonTermPostings(10_000)).toBe(2000);
  });

  it('gives rare words more weight than common ones, never below zero', () => {
    expect(idf(100, 1)).toBeGreaterThan(idf(100, 10));
    expect(idf(100, 100)).toBeGreaterThan(0);
    expect(idf(5, 9)).toBeGreaterThanOrEqual(0);
  });

  it('calls a word a namespace only when 3+ tools carry it in their names and nowhere else', () => {
    const inName: Posting['tf'] = [1, 0, 0, 0];
    expect(isNamespace([{ tf: inName }, { tf: inName }, { tf: inName }])).toBe(true);
    expect(isNamespace([{ tf: inName }, { tf: inName }])).toBe(false);
    expect(isNamespace([{ tf: inName }, { tf: inName }, { tf: inName }, { tf: [0, 0, 2, 0] }])).toBe(false);
  });
});

/** Every posting of the tenant, as the TypeScript reference reads them. */
async function postingsOf(executor: Executor, tenant: string): Promise<Posting[]> {
  const rows = await rowsOf<Record<string, number | string>>(
    executor.execute(sql`select tool_id, lexeme, tf_a, tf_b, tf_c, tf_d, len_a, len_b, len_c, len_d from tool_terms where tenant_id = ${tenant}`),
  );
  return rows.map((r) => ({
    toolId: Number(r.tool_id),
    lexeme: String(r.lexeme),
    tf: [Number(r.tf_a), Number(r.tf_b), Number(r.tf_c), Number(r.tf_d)],
    length: [Number(r.len_a), Number(r.len_b), Number(r.len_c), Number(r.len_d)],
  }));
}

/** The query's lexemes as PostgreSQL's english configuration makes them. */
async function lexemesOf(executor: Executor, query: string): Promise<string[]> {
  const [row] = await rowsOf<{ lexemes: string[] }>(executor.execute(sql`select coalesce(array_agg(lexeme), '{}') as lexemes from unnest(to_tsvector('english', ${query}))`));
  return row?.lexemes ?? [];
}

/** Compares the lexical leg's SQL scores with the TypeScript BM25F over the tenant's postings; returns how many scores it compared. */
async function compareWithReference(executor: Executor, tenant: string, queries: readonly string[], scopes: string[] = [], quoted = false): Promise<number> {
  const stats = await catalogStats(executor, tenant, scopes);
  const postings = await postingsOf(executor, tenant);
  const average: FieldVector = [stats.avgLength.a, stats.avgLength.b, stats.avgLength.c, stats.avgLength.d];
  let compared = 0;
  for (const query of queries) {
    const intentText = quoted ? withoutQuotedValues(query) : undefined;
    const intent = new Set(intentText === undefined ? [] : await lexemesOf(executor, intentText));
    const weights = new Map((await lexemesOf(executor, query)).map((lexeme) => [lexeme, intentText === undefined || intent.has(lexeme) ? 1 : QUOTED_WORD_WEIGHT]));
    const expected = bm25fScores(postings, weights, stats.visible, average, BM25_PARAMS);
    const { candidates } = await retrieveCandidates(executor, {
      visibility: { tenantId: tenant, scopes, includeRetired: false },
      filters: {},
      text: query,
      intentText,
      nameTokens: [],
      stats,
      bm25: BM25_PARAMS,
      depth: 1000,
    });
    const actual = new Map(candidates.map((c) => [c.toolId, c.lexical ?? 0]));
    expect([...actual.keys()].sort(), query).toEqual([...expected.keys()].sort());
    for (const [toolId, score] of expected) {
      expect(actual.get(toolId), `${query}: tool ${toolId}`).toBeCloseTo(score, 9);
      compared += 1;
    }
  }
  return compared;
}

/** The lexical leg's SQL against the TypeScript BM25F over the same postings, on every leg. */
forEachDatabase((db) => {
  describe('the lexical leg in SQL', () => {
    const ctx = useApp(db);
    const tenant = uniqueTenant('bm25f');
    const large = uniqueTenant('bm25f-common');
    // 210 tools share "widget": at least the 200 postings from which a word counts as common.
    const widgets = 210;
    const TUNE = ['widgets:tune'];

    beforeAll(async () => {
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      for (const body of [...ORDER_TOOLS, ...MCP_SERVER_TOOLS]) expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body })).statusCode).toBe(201);
      const tools = new ToolService(db.database.db);
      const validator = new ToolValidator(testConfig().limits);
      for (let i = 0; i < widgets; i += 1) {
        const checked = validator.validate(toolDocument({ name: `tune_widget_${i}`, description: `Tune widget number ${i}.${i % 7 === 0 ? ' Zorblax calibration included.' : ''}`, summary: undefined, required_scopes: TUNE }));
        if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
        await tools.register({ tenant: large, subject: 'ci', scopes: [PUBLISH] }, checked.document);
      }
    }, 120_000);

    it('scores every tool as the TypeScript BM25F does', async () => {
      expect(await compareWithReference(db.database.db, tenant, QUERIES)).toBeGreaterThan(20);
    });

    it('weighs words found only in quoted values at QUOTED_WORD_WEIGHT, as the reference does', async () => {
      const quoted = ['find the order titled "cancel my truck telemetry"', "search orders for 'memory entities' placed last month"];
      expect(await compareWithReference(db.database.db, tenant, quoted, [], true)).toBeGreaterThan(5);
      // A quoted word weighs less than the same word unquoted.
      const stats = await catalogStats(db.database.db, tenant, []);
      const visibility = { tenantId: tenant, scopes: [], includeRetired: false };
      const terms = await searchedTerms(db.database.db, { visibility, text: 'cancel the "truck"', intentText: withoutQuotedValues('cancel the "truck"'), stats });
      expect(terms.get('truck')?.queryWeight).toBe(QUOTED_WORD_WEIGHT);
      expect(terms.get('cancel')?.queryWeight).toBe(1);
    });

    it('scores the tools that only the vector leg or an exact name brings (not kept by the top sort) as the reference does', async () => {
      const executor = db.database.db;
      const model = 'bm25f-probe-8';
      // Arbitrary but fixed vectors under a model of its own: the vector leg's top 2 is not the lexical one.
      await executor.execute(sql`
        insert into tool_embeddings (tool_id, tenant_id, model, ord, dims, content_hash, embedding)
        select t.id, t.tenant_id, ${model}, 0, 8, '', (select array_agg(sin(t.id * 7 + d)) from generate_series(1, 8) d)::vector
        from tools t where t.tenant_id = ${tenant}`);
      const stats = await catalogStats(executor, tenant, []);
      const postings = await postingsOf(executor, tenant);
      const names = await rowsOf<{ id: number; name: string }>(executor.execute(sql`select id, name from tools where tenant_id = ${tenant}`));
      const average: FieldVector = [stats.avgLength.a, stats.avgLength.b, stats.avgLength.c, stats.avgLength.d];
      let probed = 0;
      for (const query of QUERIES) {
        const expected = bm25fScores(postings, await lexemesOf(executor, query), stats.visible, average, BM25_PARAMS);
        // Named: the matching tool with the lowest score, which the lexical top 2 leaves out.
        const weakest = [...expected].sort((a, b) => a[1] - b[1])[0]?.[0];
        const named = names.filter((t) => Number(t.id) === weakest).map((t) => t.name.toLowerCase());
        const request = {
          visibility: { tenantId: tenant, scopes: [], includeRetired: false },
          filters: {},
          text: query,
          nameTokens: named,
          stats,
          bm25: BM25_PARAMS,
          vector: { model, values: Array.from({ length: 8 }, (_, i) => Math.cos(i + query.length)), search: 'exact' as const },
          depth: 2,
        };
        const lexicalTop = [...expected].sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, 2).map(([id]) => id);
        // Both ways discovery runs the legs: one statement, and the lexical statement then the vector one (point probes).
        const together = (await retrieveCandidates(executor, request)).candidates;
        const apart = (await vectorCandidates(executor, request, await lexicalCandidates(executor, request), request.vector)).candidates;
        const byId = (list: typeof together) => [...list].sort((a, b) => a.toolId - b.toolId);
        expect(byId(apart).map((c) => c.toolId), query).toEqual(byId(together).map((c) => c.toolId));
        for (const candidates of [together, apart]) {
          for (const candidate of candidates) {
            const reference = expected.get(candidate.toolId);
            if (reference === undefined) expect(candidate.lexical, `${query}: tool ${candidate.toolId}`).toBeNull();
            else expect(candidate.lexical, `${query}: tool ${candidate.toolId}`).toBeCloseTo(reference, 9);
            if (reference !== undefined && !lexicalTop.includes(candidate.toolId)) probed += 1;
          }
          if (weakest !== undefined) expect(candidates.find((c) => c.exact)?.toolId, query).toBe(weakest);
        }
      }
      expect(probed).toBeGreaterThan(6);
    });

    it('leaves out the words the reference leaves out, counting each word once per catalog revision', async () => {
      expect(commonTermPostings(widgets)).toBeLessThanOrEqual(widgets);
      expect(await compareWithReference(db.database.db, large, ['tune the zorblax widget', 'zorblax calibration'], TUNE)).toBeGreaterThan(20);

      const stats = await catalogStats(db.database.db, large, TUNE);
      let statements = 0;
      const counting = { execute: (query: SQL) => ((statements += 1), db.database.db.execute(query)) } as unknown as Executor;
      const request = { visibility: { tenantId: large, scopes: TUNE, includeRetired: false }, text: 'tune the zorblax widget', stats };
      const searched = async (r: typeof request) => [...(await searchedTerms(counting, r)).keys()];
      expect(await searched(request)).toEqual(['zorblax']);
      expect(statements).toBe(2); // the query's lexemes, then their postings counted
      // Counted up to the cap; "tune" is in every name here, so in names as often as counted.
      const cap = commonTermPostings(widgets);
      expect(Object.fromEntries(stats.termPostings)).toEqual({ tune: { postings: cap, inNames: cap }, widget: { postings: cap, inNames: cap }, zorblax: { postings: 30, inNames: 0 } });
      expect(await searched(request)).toEqual(['zorblax']);
      expect(statements).toBe(3); // known at this revision: tokenized, not counted again
      // Postings the caller may not see are not counted.
      const outsider = { ...request, visibility: { ...request.visibility, scopes: [] }, stats: await catalogStats(db.database.db, large, []) };
      expect(await searched(outsider)).toEqual(['tune', 'widget', 'zorblax']);
    }, 60_000);
  });
});
