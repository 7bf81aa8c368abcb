/**
 * Where a new request's retrieval time goes, on a kept bench database (`npm run bench -- ...
 * --keep-database` logs its URL; loopback embedder). For `requests` new bench requests it decides
 * the searched words as the service does (fresh catalog statistics, cold memo), builds the
 * service's two retrieval statements (lexical, then vector with the HNSW index) and reports, as medians:
 * - each statement's time, plain (best of 3);
 * - from `EXPLAIN (ANALYZE)` of the lexical statement: the time to the end of the lexical scores
 *   (postings read and aggregated) and of the lexical top, with the postings read and the tools
 *   they scored; of the vector statement: the time to the end of the index scan;
 * - what the searched words hold: how many, their postings in all, and the share of the biggest three.
 * Usage: npx tsx scripts/retrieval-profile.ts <postgres-url> [requests] [tenant]
 */
import { sql } from 'drizzle-orm';

import { openPostgres, rowsOf } from '../src/db/client.js';
import { prepareQuery } from '../src/discovery/query.js';
import { catalogStats, lexicalCandidates, lexicalStatement, type RetrievalRequest, vectorStatement } from '../src/discovery/repository.js';
import { CANDIDATE_DEPTH } from '../src/discovery/service.js';
import { BM25_PARAMS } from '../src/tools/lexical/bm25f.js';
import { searchedTerms } from '../src/tools/lexical/searched-terms.js';
import { FakeEmbeddingServer } from './bench/fake-embedder.js';
import { realCallerScopes, realRequestText } from './bench/real-catalog.js';

/* eslint-disable no-console -- a script's output is its interface */

const [url, requests = '30', tenant = 'bench-t00'] = process.argv.slice(2);
if (!url) throw new Error('usage: npx tsx scripts/retrieval-profile.ts <postgres-url> [requests] [tenant]');
const database = await openPostgres(url, 2);
const { db } = database;
const scopes = realCallerScopes();
const visibility = { tenantId: tenant, scopes, includeRetired: false };

/** One node of a JSON plan, as far as this script reads it. */
interface PlanNode {
  'Node Type': string;
  'Subplan Name'?: string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Total Time': number;
  'Actual Rows': number;
  'Actual Loops': number;
  Plans?: PlanNode[];
}

function* nodes(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodes(child);
}

const bestOf3 = async (run: () => Promise<unknown>): Promise<number> => {
  let best = Infinity;
  for (let k = 0; k < 3; k += 1) {
    const t = performance.now();
    await run();
    best = Math.min(best, performance.now() - t);
  }
  return best;
};

const series: Record<string, number[]> = {};
const add = (key: string, value: number) => (series[key] ??= []).push(value);
let visible = 0;
for (let i = 0; i < Number(requests); i += 1) {
  const query = prepareQuery(realRequestText(42, 2_000_000 + i));
  const stats = await catalogStats(db, tenant, scopes);
  visible = stats.visible;
  const t = performance.now();
  const terms = await searchedTerms(db, { visibility, text: query.lexicalText, stats });
  add('searched words decided (ms)', performance.now() - t);
  const request: RetrievalRequest & { vector: NonNullable<RetrievalRequest['vector']> } = {
    visibility,
    filters: {},
    text: query.lexicalText,
    nameTokens: query.nameTokens,
    stats,
    bm25: BM25_PARAMS,
    vector: { model: 'openai:bench-hash-512', values: FakeEmbeddingServer.vector(query.text), search: 'index' },
    depth: CANDIDATE_DEPTH,
  };
  const lexical = lexicalStatement(request, terms);
  const vector = vectorStatement(request, await lexicalCandidates(db, request));
  add('lexical statement (ms)', await bestOf3(() => db.execute(lexical)));
  add('vector statement (ms)', await bestOf3(() => db.execute(vector)));

  const explain = async (statement: typeof lexical) => {
    const [plan] = await rowsOf<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }] }>(db.execute(sql`explain (analyze, format json) ${statement}`));
    const root = plan!['QUERY PLAN'][0];
    return { root, all: [...nodes(root.Plan)] };
  };
  const lexicalPlan = await explain(lexical);
  const cte = (all: PlanNode[], name: string) => all.find((n) => n['Subplan Name'] === `CTE ${name}`);
  const postings = lexicalPlan.all.filter((n) => n['Relation Name'] === 'tool_terms' || (n['Index Name'] ?? '').startsWith('tool_terms'));
  add('explain lexical: execution (ms)', lexicalPlan.root['Execution Time']);
  add('explain lexical: scores done (ms)', cte(lexicalPlan.all, 'lexical_scores')?.['Actual Total Time'] ?? NaN);
  add('explain lexical: top done (ms)', cte(lexicalPlan.all, 'lexical_top')?.['Actual Total Time'] ?? NaN);
  add('postings read', postings.reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0));
  add('tools scored', cte(lexicalPlan.all, 'lexical_scores')?.['Actual Rows'] ?? NaN);
  const vectorPlan = await explain(vector);
  add('explain vector: execution (ms)', vectorPlan.root['Execution Time']);
  add('explain vector: nearest done (ms)', cte(vectorPlan.all, 'vector_nearest')?.['Actual Total Time'] ?? NaN);

  const counts = [...terms.values()].map((c) => c.postings).sort((a, b) => b - a);
  const total = counts.reduce((a, b) => a + b, 0);
  add('searched words', counts.length);
  add('their visible postings', total);
  add('share of the biggest 3 words (%)', total === 0 ? 0 : (100 * counts.slice(0, 3).reduce((a, b) => a + b, 0)) / total);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
console.log(`${tenant}: ${visible} tools visible to the caller, ${requests} new requests, medians`);
for (const [key, xs] of Object.entries(series)) console.log(`  ${key}: ${median(xs).toFixed(key.includes('ms') || key.includes('%') ? 2 : 0)}`);
await database.close();
