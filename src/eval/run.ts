import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import type { FastifyInstance } from 'fastify';
import { SignJWT } from 'jose';

import { buildApp } from '../app.js';
import { createVerifier } from '../auth/verifier.js';
import { loadConfig } from '../config.js';
import { openPglite } from '../db/client.js';
import { migrate } from '../db/migrate.js';
import type { RankingMode } from '../discovery/fusion.js';
import type { Embedder } from '../embedding/provider.js';
import { loadDataset, toToolDocument } from './dataset.js';
import { keywordOverlapRank } from './keyword-baseline.js';
import { type QueryOutcome, type RetrievalMetrics, summarize } from './metrics.js';

export interface EvalOptions {
  dataDir: string;
  outDir: string;
  embedder: Embedder | undefined;
  modes: RankingMode[];
  /** Evaluate only the first n queries (quick runs). */
  limit?: number;
  /** Evaluate every n-th query (a deterministic sample across the whole set). */
  stride?: number;
  progress?: (message: string) => void;
}

export interface MethodResult extends RetrievalMetrics {
  method: string;
  /** Mean prompt tokens of the default 3-tool shortlist over the whole catalog's (openai format). */
  tokenRatio: number | null;
  /** Share of queries answered with an empty shortlist. */
  empty: number;
  lowConfidence: number;
  msPerQuery: number;
}

export interface EvalReport {
  dataset: string;
  tools: number;
  registered: number;
  repaired: number;
  rejected: { name: string; reason: string }[];
  registrationToolsPerSecond: number;
  queries: number;
  results: MethodResult[];
}

const TENANT = 'eval';

/** Registers a dataset through the HTTP API on a throwaway database and replays its queries. */
export async function runEval(options: EvalOptions): Promise<EvalReport> {
  const log = options.progress ?? (() => undefined);
  const secret = randomBytes(32).toString('base64url');
  // Real-world descriptions run long; the eval measures retrieval, not publishing limits.
  const config = loadConfig({ DATA_DIR: 'memory://', JWT_SECRET: secret, MAX_DESCRIPTION_LENGTH: '16384', BODY_LIMIT_BYTES: String(8 * 1024 * 1024), LOG_LEVEL: 'silent', RATE_LIMIT_DISCOVER_PER_MINUTE: '0' });
  const database = await openPglite('memory://');
  await migrate(database);
  const app = await buildApp({ config, database, ownsDatabase: true, verify: createVerifier(config.jwt), embedder: options.embedder });
  await app.ready();
  try {
    const token = await new SignJWT({ tenant_id: TENANT, scope: 'registry:publish' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('12h')
      .sign(new TextEncoder().encode(secret));
    const headers = { authorization: `Bearer ${token}` };
    const { tools, queries: allQueries } = await loadDataset(options.dataDir);
    const sampled = options.stride && options.stride > 1 ? allQueries.filter((_, i) => i % options.stride! === 0) : allQueries;
    const queries = options.limit ? sampled.slice(0, options.limit) : sampled;

    const started = performance.now();
    let repaired = 0;
    const rejected: EvalReport['rejected'] = [];
    for (const tool of tools) {
      const { document, repairs } = toToolDocument(tool);
      if (repairs.length > 0) repaired += 1;
      const response = await app.inject({ method: 'POST', url: '/v1/tools', headers, payload: document });
      if (response.statusCode !== 201) rejected.push({ name: tool.name, reason: response.body.slice(0, 300) });
    }
    const registrationSeconds = (performance.now() - started) / 1000;
    log(`registered ${tools.length - rejected.length}/${tools.length} tools in ${registrationSeconds.toFixed(1)} s; embedding…`);
    await app.indexer?.flush();

    const results: MethodResult[] = [baseline(tools, queries)];
    for (const mode of options.modes) {
      if (mode !== 'lexical' && !options.embedder) continue;
      results.push(await replay(app, headers, queries, mode, log));
    }
    const report: EvalReport = {
      dataset: options.dataDir,
      tools: tools.length,
      registered: tools.length - rejected.length,
      repaired,
      rejected,
      registrationToolsPerSecond: Math.round(tools.length / registrationSeconds),
      queries: queries.length,
      results,
    };
    await mkdir(options.outDir, { recursive: true });
    await writeFile(join(options.outDir, 'eval.json'), `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(join(options.outDir, 'eval.md'), `${markdownTable(report)}\n`);
    return report;
  } finally {
    await app.close();
  }
}

function baseline(tools: { name: string; description: string }[], queries: { query: string; relevant: string[] }[]): MethodResult {
  const started = performance.now();
  const outcomes = queries.map((q) => ({ ranked: keywordOverlapRank(q.query, tools, 10), relevant: q.relevant }));
  return {
    method: 'keyword overlap (naive baseline)',
    ...summarize(outcomes),
    tokenRatio: null,
    empty: outcomes.filter((o) => o.ranked.length === 0).length / Math.max(outcomes.length, 1),
    lowConfidence: 0,
    msPerQuery: (performance.now() - started) / Math.max(queries.length, 1),
  };
}

interface DiscoverBody {
  tools: { name: string; card: { tokens: { openai: number } } }[];
  tokens: { catalog: number };
  low_confidence: boolean;
}

async function replay(
  app: FastifyInstance,
  headers: Record<string, string>,
  queries: { query: string; relevant: string[] }[],
  mode: RankingMode,
  log: (message: string) => void,
): Promise<MethodResult> {
  const outcomes: QueryOutcome[] = [];
  let ratio = 0;
  let low = 0;
  const started = performance.now();
  for (const [i, q] of queries.entries()) {
    const response = await app.inject({ method: 'POST', url: '/v1/discover', headers, payload: { query: q.query, top_k: 10, format: 'openai', mode } });
    if (response.statusCode !== 200) throw new Error(`discover failed (${response.statusCode}): ${response.body.slice(0, 300)}`);
    const body = response.json<DiscoverBody>();
    outcomes.push({ ranked: body.tools.map((t) => t.name), relevant: q.relevant });
    const shortlist = body.tools.slice(0, 3).reduce((sum, t) => sum + t.card.tokens.openai, 0);
    ratio += body.tokens.catalog > 0 ? shortlist / body.tokens.catalog : 0;
    if (body.low_confidence) low += 1;
    if ((i + 1) % 250 === 0) log(`${mode}: ${i + 1}/${queries.length}`);
  }
  const n = Math.max(queries.length, 1);
  return {
    method: mode === 'hybrid' ? 'hybrid (service default)' : `${mode} only`,
    ...summarize(outcomes),
    tokenRatio: ratio / n,
    empty: outcomes.filter((o) => o.ranked.length === 0).length / n,
    lowConfidence: low / n,
    msPerQuery: (performance.now() - started) / n,
  };
}

const f3 = (x: number): string => x.toFixed(3);

/** The report as a markdown table. */
export function markdownTable(report: EvalReport): string {
  const lines = [
    `Dataset ${report.dataset}: ${report.registered}/${report.tools} tools registered (${report.repaired} repaired to pass validation), ${report.queries} queries; registration ${report.registrationToolsPerSecond} tools/s.`,
    '',
    '| method | R@1 | R@3 | R@5 | MRR | nDCG@5 | top-3 tokens / catalog | empty | low confidence | ms/query |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...report.results.map(
      (r) =>
        `| ${r.method} | ${f3(r.recall1)} | ${f3(r.recall3)} | ${f3(r.recall5)} | ${f3(r.mrr)} | ${f3(r.ndcg5)} | ${r.tokenRatio === null ? '-' : `${(r.tokenRatio * 100).toFixed(1)}%`} | ${(r.empty * 100).toFixed(1)}% | ${(r.lowConfidence * 100).toFixed(1)}% | ${r.msPerQuery.toFixed(1)} |`,
    ),
  ];
  return lines.join('\n');
}
