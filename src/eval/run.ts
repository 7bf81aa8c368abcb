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
import { type DatasetQuery, type DatasetTool, levelOf, loadDataset, toToolDocument } from './dataset.js';
import { hitAt, type QueryOutcome, type RetrievalMetrics, summarize } from './metrics.js';
import { PlainBm25 } from './plain-bm25.js';
import { presence, toolHalf, withheld } from './splits.js';

export interface EvalOptions {
  dataDir: string;
  outDir: string;
  embedder: Embedder | undefined;
  modes: RankingMode[];
  /** Evaluate only the first n queries (quick runs). */
  limit?: number;
  /** Evaluate every n-th query (a deterministic sample across the whole set). */
  stride?: number;
  /** Skip the abstention and tool-half checks (each registers the dataset again). */
  rankingOnly?: boolean;
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

/** R@3 of the hybrid ranking on disjoint parts of the dataset: gains that fit one part only show here. */
export interface Generality {
  part: string;
  queries: number;
  recall3: number;
  recall5: number;
  mrr: number;
}

/** One method's metrics on one level of requests (dev-mcp: L1..L4; MetaTool: single, multi). */
export interface LevelRow extends RetrievalMetrics {
  method: string;
  level: string;
}

/** How requests fare when their tools are missing from the catalog, against requests whose tools are there. */
export interface AbstentionRow {
  requests: 'absent' | 'present';
  queries: number;
  /** Share answered with an empty shortlist or low_confidence. */
  abstained: number;
  empty: number;
  /** Hit rate at 3 of the requests that were answered (not empty, not low_confidence); present only. */
  answeredRecall3: number | null;
  /** Hit rate at 3 over all of them, flagged or not; present only. */
  recall3: number | null;
}

/** Requests pasted inside a long conversation, against the same requests alone. */
export interface LongRequestRow {
  form: string;
  queries: number;
  recall3: number;
  mrr: number;
}

/** Top-1 score against how often the top tool was right: what `score` means, measured. */
export interface CalibrationBin {
  from: number;
  to: number;
  queries: number;
  /** Share of these queries whose first tool is relevant. */
  correct: number;
  meanScore: number;
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
  /** Each method (the floor included) per level of requests, when the dataset has levels. */
  levels: LevelRow[];
  generality: Generality[];
  /**
   * "Nothing fits" (hybrid, top_k 3): requests that no registered tool serves against requests
   * whose tools are there. `infeasible`: the dataset's own unserved requests, whole catalog;
   * `withheld`: a hash-chosen share of the tools withheld.
   */
  abstention: { kind: 'infeasible' | 'withheld'; withheldShare: number; withheldTools: number; rows: AbstentionRow[] } | null;
  calibration: CalibrationBin[];
  longRequests: LongRequestRow[];
}

/** One discovery's outcome as the eval records it. */
interface Answer extends QueryOutcome {
  id: string;
  scores: number[];
  lowConfidence: boolean;
  tokenRatio: number;
}

interface DiscoverBody {
  tools: { name: string; score: number; card: { tokens: { openai: number } } }[];
  tokens: { catalog: number };
  low_confidence: boolean;
}

/** The share of tools the abstention check withholds. */
export const WITHHELD_SHARE = 0.15;

/** A throwaway registry over HTTP: one app, one tenant per catalog variant. */
class EvalRegistry {
  private constructor(
    readonly app: FastifyInstance,
    private readonly secret: string,
  ) {}

  static async open(embedder: Embedder | undefined): Promise<EvalRegistry> {
    const secret = randomBytes(32).toString('base64url');
    // Real-world descriptions run long; the eval measures retrieval, not publishing limits.
    const config = loadConfig({ DATA_DIR: 'memory://', JWT_SECRET: secret, MAX_DESCRIPTION_LENGTH: '16384', BODY_LIMIT_BYTES: String(8 * 1024 * 1024), LOG_LEVEL: 'silent', RATE_LIMIT_DISCOVER_PER_MINUTE: '0', RATE_LIMIT_PUBLISH_PER_MINUTE: '0' });
    const database = await openPglite('memory://');
    await migrate(database);
    const app = await buildApp({ config, database, ownsDatabase: true, verify: createVerifier(config.jwt), embedder });
    await app.ready();
    return new EvalRegistry(app, secret);
  }

  async headers(tenant: string): Promise<Record<string, string>> {
    const token = await new SignJWT({ tenant_id: tenant, scope: 'registry:publish' })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('12h')
      .sign(new TextEncoder().encode(this.secret));
    return { authorization: `Bearer ${token}` };
  }

  /** Registers tools in `tenant`; returns the repaired count and the rejections. */
  async register(tenant: string, tools: DatasetTool[]): Promise<{ repaired: number; rejected: EvalReport['rejected'] }> {
    const headers = await this.headers(tenant);
    let repaired = 0;
    const rejected: EvalReport['rejected'] = [];
    for (const tool of tools) {
      const { document, repairs } = toToolDocument(tool);
      if (repairs.length > 0) repaired += 1;
      const response = await this.app.inject({ method: 'POST', url: '/v1/tools', headers, payload: document });
      if (response.statusCode !== 201) rejected.push({ name: tool.name, reason: response.body.slice(0, 300) });
    }
    await this.app.indexer?.flush();
    return { repaired, rejected };
  }

  async replay(tenant: string, queries: DatasetQuery[], mode: RankingMode, topK: number, log: (message: string) => void): Promise<{ answers: Answer[]; ms: number }> {
    const headers = await this.headers(tenant);
    const answers: Answer[] = [];
    const started = performance.now();
    for (const [i, q] of queries.entries()) {
      const response = await this.app.inject({ method: 'POST', url: '/v1/discover', headers, payload: { query: q.query, top_k: topK, format: 'openai', mode } });
      if (response.statusCode !== 200) throw new Error(`discover failed (${response.statusCode}): ${response.body.slice(0, 300)}`);
      const body = response.json<DiscoverBody>();
      const shortlist = body.tools.slice(0, 3).reduce((sum, t) => sum + t.card.tokens.openai, 0);
      answers.push({
        id: q.id,
        ranked: body.tools.map((t) => t.name),
        relevant: q.relevant,
        scores: body.tools.map((t) => t.score),
        lowConfidence: body.low_confidence,
        tokenRatio: body.tokens.catalog > 0 ? shortlist / body.tokens.catalog : 0,
      });
      if ((i + 1) % 500 === 0) log(`${tenant} ${mode}: ${i + 1}/${queries.length}`);
    }
    return { answers, ms: (performance.now() - started) / Math.max(queries.length, 1) };
  }

  close(): Promise<void> {
    return this.app.close();
  }
}

const share = (items: readonly unknown[], total: number): number => items.length / Math.max(total, 1);
const isEmptyOrFlagged = (a: Answer): boolean => a.ranked.length === 0 || a.lowConfidence;

/**
 * Registers a dataset through the HTTP API on a throwaway database and replays its queries: the
 * ranking table per method; R@3 on odd and even queries and on two disjoint tool halves (each half
 * registered alone, its own queries replayed); and the abstention check (a hash-chosen 15% of the
 * tools withheld: how often requests for a missing tool come back empty or low_confidence, against
 * requests whose tools are there).
 */
export async function runEval(options: EvalOptions): Promise<EvalReport> {
  const log = options.progress ?? (() => undefined);
  const registry = await EvalRegistry.open(options.embedder);
  try {
    const { tools, queries: allQueries, infeasible } = await loadDataset(options.dataDir);
    const sampled = options.stride && options.stride > 1 ? allQueries.filter((_, i) => i % options.stride! === 0) : allQueries;
    const queries = options.limit ? sampled.slice(0, options.limit) : sampled;

    const started = performance.now();
    const { repaired, rejected } = await registry.register('eval', tools);
    const registrationSeconds = (performance.now() - started) / 1000;
    log(`registered and embedded ${tools.length - rejected.length}/${tools.length} tools in ${registrationSeconds.toFixed(1)} s`);

    const floor = floorAnswers(tools, queries);
    const results: MethodResult[] = [floor.result];
    const levels: LevelRow[] = levelRows(floor.result.method, floor.answers);
    let hybrid: Answer[] | undefined;
    await mkdir(options.outDir, { recursive: true });
    await writeAnswers(options.outDir, 'floor', floor.answers);
    for (const mode of options.modes) {
      if (mode !== 'lexical' && !options.embedder) continue;
      const { answers, ms } = await registry.replay('eval', queries, mode, 10, log);
      if (mode === 'hybrid') hybrid = answers;
      await writeAnswers(options.outDir, mode, answers);
      const method = mode === 'hybrid' ? 'hybrid (service default)' : `${mode} only`;
      results.push(methodResult(method, answers, ms));
      levels.push(...levelRows(method, answers));
    }
    const ranking = hybrid ?? [];
    const generality: Generality[] = [
      generalityRow('odd queries', ranking.filter((_, i) => i % 2 === 1)),
      generalityRow('even queries', ranking.filter((_, i) => i % 2 === 0)),
    ];
    let abstention: EvalReport['abstention'] = null;
    let longRequests: LongRequestRow[] = [];
    if (!options.rankingOnly && hybrid) {
      for (const half of [0, 1] as const) {
        const halfTools = tools.filter((t) => toolHalf(t.name) === half);
        const names = new Set(halfTools.map((t) => t.name));
        await registry.register(`eval-half-${half}`, halfTools);
        const halfQueries = queries.filter((q) => presence(q.relevant, names) === 'present');
        const { answers } = await registry.replay(`eval-half-${half}`, halfQueries, 'hybrid', 10, log);
        generality.push(generalityRow(`tool half ${half + 1} (${halfTools.length} tools alone)`, answers));
      }
      abstention = infeasible.length > 0 ? await infeasibleCheck(registry, hybrid, infeasible, log) : await abstentionCheck(registry, tools, queries, log);
      longRequests = await longRequestCheck(registry, queries, log);
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
      levels,
      generality,
      abstention,
      calibration: calibration(ranking),
      longRequests,
    };
    await writeFile(join(options.outDir, 'eval.json'), `${JSON.stringify(report, null, 2)}\n`);
    await writeFile(join(options.outDir, 'eval.md'), `${markdownTable(report)}\n`);
    return report;
  } finally {
    await registry.close();
  }
}

/** Each request's top five beside its relevant tools, one JSON line per request, for reading the misses. */
function writeAnswers(outDir: string, method: string, answers: readonly (QueryOutcome & { id: string })[]): Promise<void> {
  const lines = answers.map((a) => JSON.stringify({ id: a.id, hit1: hitAt(a, 1) === 1, top: a.ranked.slice(0, 5), relevant: a.relevant }));
  return writeFile(join(outDir, `answers-${method}.jsonl`), `${lines.join('\n')}\n`);
}

/** The floor's answers: plain BM25 over every tool of the dataset (registered or not, as ../shared/bench/README.md computes it). */
function floorAnswers(tools: DatasetTool[], queries: DatasetQuery[]): { result: MethodResult; answers: (QueryOutcome & { id: string })[] } {
  const started = performance.now();
  const floor = new PlainBm25(tools);
  const answers = queries.map((q) => ({ id: q.id, ranked: floor.rank(q.query, 10), relevant: q.relevant }));
  const ms = (performance.now() - started) / Math.max(queries.length, 1);
  return {
    answers,
    result: { method: 'plain BM25 (the floor)', ...summarize(answers), tokenRatio: null, empty: share(answers.filter((a) => a.ranked.length === 0), answers.length), lowConfidence: 0, msPerQuery: ms },
  };
}

/** Metrics per level of requests (none when the dataset's ids carry no level). */
function levelRows(method: string, answers: (QueryOutcome & { id: string })[]): LevelRow[] {
  const byLevel = new Map<string, QueryOutcome[]>();
  for (const answer of answers) {
    const level = levelOf(answer.id);
    if (level) byLevel.set(level, [...(byLevel.get(level) ?? []), answer]);
  }
  return [...byLevel].sort(([a], [b]) => a.localeCompare(b)).map(([level, group]) => ({ method, level, ...summarize(group) }));
}

/**
 * The dataset's requests that no tool serves, on the whole catalog, against its labelled
 * requests (their hybrid answers: whether a shortlist is empty or low_confidence does not depend
 * on top_k): how often each comes back empty or low_confidence.
 */
async function infeasibleCheck(registry: EvalRegistry, labelled: Answer[], infeasible: DatasetQuery[], log: (message: string) => void): Promise<NonNullable<EvalReport['abstention']>> {
  const { answers } = await registry.replay('eval', infeasible, 'hybrid', 3, log);
  return { kind: 'infeasible', withheldShare: 0, withheldTools: 0, rows: [abstentionRow('absent', answers), abstentionRow('present', labelled)] };
}

async function abstentionCheck(registry: EvalRegistry, tools: DatasetTool[], queries: DatasetQuery[], log: (message: string) => void): Promise<NonNullable<EvalReport['abstention']>> {
  const kept = tools.filter((t) => !withheld(t.name, WITHHELD_SHARE));
  const names = new Set(kept.map((t) => t.name));
  await registry.register('eval-withheld', kept);
  // The default shortlist size agents ask for.
  const { answers } = await registry.replay('eval-withheld', queries, 'hybrid', 3, log);
  const rows = (['absent', 'present'] as const).map((requests) => abstentionRow(requests, answers.filter((a) => presence(a.relevant, names) === requests)));
  return { kind: 'withheld', withheldShare: WITHHELD_SHARE, withheldTools: tools.length - kept.length, rows };
}

function abstentionRow(requests: AbstentionRow['requests'], group: Answer[]): AbstentionRow {
  const answered = group.filter((a) => !isEmptyOrFlagged(a));
  return {
    requests,
    queries: group.length,
    abstained: share(group.filter(isEmptyOrFlagged), group.length),
    empty: share(group.filter((a) => a.ranked.length === 0), group.length),
    answeredRecall3: requests === 'present' ? share(answered.filter((a) => hitAt(a, 3) === 1), answered.length) : null,
    recall3: requests === 'present' ? share(group.filter((a) => hitAt(a, 3) === 1), group.length) : null,
  };
}

/**
 * Every 5th request as the last user turn of a pasted conversation (earlier requests of the set as
 * the previous turns, a canned assistant reply between them, mostly over 1,000 characters), searched
 * by the service; and, for comparison, the same conversation cut to its first or last 1,000
 * characters by the caller.
 */
async function longRequestCheck(registry: EvalRegistry, queries: DatasetQuery[], log: (message: string) => void): Promise<LongRequestRow[]> {
  const sample = queries.filter((_, i) => i % 5 === 0);
  const conversation = (i: number): string => {
    const turns: string[] = [];
    for (let back = 6; back >= 1; back -= 1) {
      turns.push(`User: ${queries[(i * 5 + queries.length - back * 7) % queries.length]!.query}`, 'Assistant: Sure, here is what I found for that. Anything else?');
    }
    return `${turns.join('\n')}\nUser: ${sample[i]!.query}`;
  };
  const forms: [string, (i: number) => string][] = [
    ['the request alone', (i) => sample[i]!.query],
    ['in a conversation, searched by the service (last user turn)', conversation],
    ['in a conversation, its first 1,000 characters', (i) => conversation(i).slice(0, 1000)],
    ['in a conversation, its last 1,000 characters', (i) => conversation(i).slice(-1000)],
  ];
  const rows: LongRequestRow[] = [];
  for (const [form, text] of forms) {
    const { answers } = await registry.replay('eval', sample.map((q, i) => ({ ...q, query: text(i) })), 'hybrid', 10, log);
    const m = summarize(answers);
    rows.push({ form, queries: answers.length, recall3: m.recall3, mrr: m.mrr });
  }
  return rows;
}

function methodResult(method: string, answers: Answer[], msPerQuery: number): MethodResult {
  const n = Math.max(answers.length, 1);
  return {
    method,
    ...summarize(answers),
    tokenRatio: answers.reduce((sum, a) => sum + a.tokenRatio, 0) / n,
    empty: share(answers.filter((a) => a.ranked.length === 0), n),
    lowConfidence: share(answers.filter((a) => a.lowConfidence), n),
    msPerQuery,
  };
}

function generalityRow(part: string, answers: Answer[]): Generality {
  const m = summarize(answers);
  return { part, queries: answers.length, recall3: m.recall3, recall5: m.recall5, mrr: m.mrr };
}

/** Top-1 score in fifths of the scale against how often that first tool was right. */
function calibration(answers: Answer[]): CalibrationBin[] {
  const bins: CalibrationBin[] = [];
  for (let i = 0; i < 5; i += 1) {
    const from = i / 5;
    const to = (i + 1) / 5;
    const group = answers.filter((a) => a.scores.length > 0 && a.scores[0]! >= from && (a.scores[0]! < to || (i === 4 && a.scores[0]! <= to)));
    bins.push({
      from,
      to,
      queries: group.length,
      correct: share(group.filter((a) => hitAt(a, 1) === 1), group.length),
      meanScore: group.reduce((sum, a) => sum + a.scores[0]!, 0) / Math.max(group.length, 1),
    });
  }
  return bins;
}

const f3 = (x: number): string => x.toFixed(3);
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

/** The report as markdown: ranking, generality, abstention and calibration tables. */
export function markdownTable(report: EvalReport): string {
  const lines = [
    `Dataset ${report.dataset}: ${report.registered}/${report.tools} tools registered (${report.repaired} repaired to pass validation), ${report.queries} queries; registration ${report.registrationToolsPerSecond} tools/s.`,
    '',
    '| method | R@1 | R@3 | R@5 | MRR | nDCG@5 | top-3 tokens / catalog | empty | low confidence | ms/query |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...report.results.map(
      (r) =>
        `| ${r.method} | ${f3(r.recall1)} | ${f3(r.recall3)} | ${f3(r.recall5)} | ${f3(r.mrr)} | ${f3(r.ndcg5)} | ${r.tokenRatio === null ? '-' : pct(r.tokenRatio)} | ${pct(r.empty)} | ${pct(r.lowConfidence)} | ${r.msPerQuery.toFixed(1)} |`,
    ),
  ];
  if (report.levels.length > 0) {
    lines.push('', 'Per level (R@1 / R@3 / R@5 / MRR):', '', '| method | level | queries | R@1 | R@3 | R@5 | MRR |', '|---|---|---|---|---|---|---|');
    for (const r of report.levels) lines.push(`| ${r.method} | ${r.level} | ${r.queries} | ${f3(r.recall1)} | ${f3(r.recall3)} | ${f3(r.recall5)} | ${f3(r.mrr)} |`);
  }
  if (report.generality.length > 0) {
    lines.push('', 'Generality (hybrid, top_k 10):', '', '| part | queries | R@3 | R@5 | MRR |', '|---|---|---|---|---|');
    for (const g of report.generality) lines.push(`| ${g.part} | ${g.queries} | ${f3(g.recall3)} | ${f3(g.recall5)} | ${f3(g.mrr)} |`);
  }
  if (report.abstention) {
    const a = report.abstention;
    lines.push(
      '',
      a.kind === 'infeasible'
        ? 'Abstention (hybrid, top_k 3, whole catalog): requests no tool serves (infeasible.jsonl) against the labelled requests:'
        : `Abstention (hybrid, top_k 3; ${a.withheldTools} tools = ${pct(a.withheldShare)} withheld by a hash of the name):`,
      '',
      '| requests | queries | empty or low_confidence | empty | R@3 of the answered | R@3 of all |',
      '|---|---|---|---|---|---|',
    );
    for (const r of a.rows) {
      lines.push(`| ${a.kind === 'infeasible' ? (r.requests === 'absent' ? 'no tool serves them' : 'labelled') : `relevant tools ${r.requests}`} | ${r.queries} | ${pct(r.abstained)} | ${pct(r.empty)} | ${r.answeredRecall3 === null ? '-' : f3(r.answeredRecall3)} | ${r.recall3 === null ? '-' : f3(r.recall3)} |`);
    }
  }
  if (report.longRequests.length > 0) {
    lines.push('', 'Long requests (hybrid, every 5th query):', '', '| form | queries | R@3 | MRR |', '|---|---|---|---|');
    for (const r of report.longRequests) lines.push(`| ${r.form} | ${r.queries} | ${f3(r.recall3)} | ${f3(r.mrr)} |`);
  }
  if (report.calibration.some((b) => b.queries > 0)) {
    lines.push('', 'Calibration (hybrid, all tools registered): top-1 score against how often the top tool was relevant:', '', '| top-1 score | queries | mean score | top tool relevant |', '|---|---|---|---|');
    for (const b of report.calibration) lines.push(`| ${b.from.toFixed(1)}–${b.to.toFixed(1)} | ${b.queries} | ${b.queries > 0 ? f3(b.meanScore) : '-'} | ${b.queries > 0 ? pct(b.correct) : '-'} |`);
  }
  return lines.join('\n');
}
