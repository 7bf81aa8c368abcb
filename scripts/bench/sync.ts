/**
 * `npm run bench:sync`: declarative catalog sync (POST /v1/catalog/sync) against the real server
 * (a child process) on embedded PGlite, PGlite over the wire and native PostgreSQL. One source
 * declares 1,000 real-shaped tools: the first sync, the time until every vector is stored, a
 * re-sync of the unchanged catalog, and a sync with 10 of the 1,000 changed (each timed end to end
 * from the client: serializing, sending, the server's work, the answer). Targets (issue 36):
 * unchanged re-sync <= 3 s, 10 changed <= 5 s. A benchmark, not a test: figures go in the report.
 * Options: see `npm run bench:sync -- --help`.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';

import { Command } from 'commander';
import { SignJWT } from 'jose';

import type { BenchTool } from './catalog.js';
import { FakeEmbeddingServer } from './fake-embedder.js';
import { dropDatabase, freshDatabase, type PostgresServer, startPostgres } from './postgres.js';
import { type Child, freePort, startService, startSocketDatabase } from './processes.js';
import { generateRealTools } from './real-catalog.js';

/* eslint-disable no-console -- a script's output is its interface */

const program = new Command('bench:sync')
  .option('--tools <n>', 'tools the source declares', '1000')
  .option('--changed <n>', 'tools changed in the "changed" sync', '10')
  .option('--runs <n>', 'timed runs of each re-sync (the median is reported)', '3')
  .option('--drivers <list>', 'embedded, socket (PGlite over the wire), postgres (DATABASE_URL or scripts/postgres.sh)', 'embedded,socket,postgres')
  .option('--embedder <kind>', 'loopback (hashing embedder over HTTP) or local (the real in-process encoder)', 'loopback')
  .option('--threads <n>', 'EMBEDDING_LOCAL_THREADS of the service (local embedder)')
  .option('--seed <n>', 'catalog seed', '42')
  .option('--out <dir>', 'output folder', 'bench-results');
program.parse();
const opts = program.opts<{ tools: string; changed: string; runs: string; drivers: string; embedder: string; threads?: string; seed: string; out: string }>();

const TARGETS = { unchanged: 3, changed: 5 };
const SOURCE = 'bench-sync';
const TENANT = 'bench-sync';
const toolCount = Number(opts.tools);
const changedCount = Number(opts.changed);
const runs = Number(opts.runs);
const drivers = opts.drivers.split(',').map((d) => d.trim()).filter(Boolean);
for (const d of drivers) if (!['embedded', 'socket', 'postgres'].includes(d)) throw new Error(`unknown driver ${d}`);
if (!['loopback', 'local'].includes(opts.embedder)) throw new Error(`unknown embedder ${opts.embedder}`);
const secret = randomBytes(32).toString('base64url');

const log = (message: string) => console.error(`[bench:sync ${new Date().toISOString().slice(11, 19)}] ${message}`);
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface SyncAnswer {
  created: string[];
  updated: string[];
  unchanged: string[];
  retired: string[];
  errors: { name: string; error: string }[];
}

interface DriverReport {
  driver: string;
  firstSyncSeconds: number;
  firstSyncCreated: number;
  everyVectorSeconds: number;
  indexTextsPerSecond: number | null;
  unchangedSeconds: number[];
  changedSeconds: number[];
  changedReindexSeconds: number;
  errors: number;
}

async function sync(base: string, token: string, tools: BenchTool[]): Promise<{ seconds: number; answer: SyncAnswer }> {
  const started = performance.now();
  const response = await fetch(`${base}/v1/catalog/sync`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ source: SOURCE, tools }),
  });
  const text = await response.text();
  const seconds = (performance.now() - started) / 1000;
  if (response.status !== 200) throw new Error(`sync answered ${response.status}: ${text.slice(0, 500)}`);
  return { seconds, answer: JSON.parse(text) as SyncAnswer };
}

interface Progress {
  pending: number;
  failed: number;
  texts_per_second: number | null;
}

/** Seconds until the source has no tool waiting for vectors (the service's own index status). */
async function untilIndexed(base: string, token: string): Promise<{ seconds: number; last: Progress }> {
  const started = performance.now();
  for (;;) {
    const response = await fetch(`${base}/v1/catalog/index-status?source=${SOURCE}`, { headers: { authorization: `Bearer ${token}` } });
    const progress = (await response.json()) as Progress;
    if (progress.pending === 0) return { seconds: (performance.now() - started) / 1000, last: progress };
    if (performance.now() - started > 3_600_000) throw new Error(`still ${progress.pending} pending after an hour`);
    await sleep(250);
  }
}

/** The catalog with tools `from`..`from + n` changed: a longer description and the next patch version. */
function changed(tools: BenchTool[], run: number, n: number): BenchTool[] {
  return tools.map((tool, i) => {
    if (i < run * n || i >= (run + 1) * n) return tool;
    const [major, minor, patch] = tool.version.split('.').map(Number) as [number, number, number];
    return { ...tool, version: `${major}.${minor}.${patch + 1}`, description: `${tool.description} Changed in run ${run + 1}.` };
  });
}

async function measure(driver: string, env: Record<string, string>, token: string, catalog: BenchTool[]): Promise<DriverReport> {
  const { child } = await startService(env);
  try {
    const base = `http://127.0.0.1:${env.PORT}`;
    log(`${driver}: first sync of ${catalog.length} tools`);
    const first = await sync(base, token, catalog);
    if (first.answer.errors.length > 0) log(`first sync errors: ${first.answer.errors.length}; first: ${JSON.stringify(first.answer.errors[0])}`);
    log(`${driver}: first sync ${round(first.seconds)} s (${first.answer.created.length} created); waiting for every vector`);
    const indexed = await untilIndexed(base, token);
    log(`${driver}: every vector stored ${round(indexed.seconds, 1)} s after the first sync answered (${indexed.last.texts_per_second ?? '-'} texts/s)`);
    const unchangedSeconds: number[] = [];
    const changedSeconds: number[] = [];
    let errors = first.answer.errors.length;
    let current = catalog;
    let reindex = 0;
    for (let run = 0; run < runs; run += 1) {
      const same = await sync(base, token, current);
      if (same.answer.unchanged.length !== current.length) throw new Error(`re-sync left ${current.length - same.answer.unchanged.length} tools not unchanged`);
      unchangedSeconds.push(same.seconds);
      current = changed(current, run, changedCount);
      const edit = await sync(base, token, current);
      if (edit.answer.updated.length !== changedCount) log(`changed sync updated ${edit.answer.updated.length}, expected ${changedCount}: ${JSON.stringify(edit.answer.errors.slice(0, 2))}`);
      errors += edit.answer.errors.length;
      changedSeconds.push(edit.seconds);
      // Re-indexing the changed tools happens after the answer; the next re-sync starts on an idle service.
      reindex = (await untilIndexed(base, token)).seconds;
      log(`${driver} run ${run + 1}: unchanged ${round(same.seconds)} s, ${changedCount} changed ${round(edit.seconds)} s (re-indexed ${round(reindex, 1)} s later)`);
    }
    return {
      driver,
      firstSyncSeconds: round(first.seconds),
      firstSyncCreated: first.answer.created.length,
      everyVectorSeconds: round(indexed.seconds, 1),
      indexTextsPerSecond: indexed.last.texts_per_second,
      unchangedSeconds: unchangedSeconds.map((s) => round(s)),
      changedSeconds: changedSeconds.map((s) => round(s)),
      changedReindexSeconds: round(reindex, 1),
      errors,
    };
  } catch (error) {
    throw new Error(`${(error as Error).message}; server output:\n${child.output.slice(-1500)}`, { cause: error });
  } finally {
    await child.stop();
  }
}

function markdown(reports: DriverReport[], meta: Record<string, string>): string {
  const verdict = (value: number, limit: number) => (value <= limit ? 'met' : '**missed**');
  const out = [
    '# Catalog sync benchmark',
    '',
    ...Object.entries(meta).map(([k, v]) => `- ${k}: ${v}`),
    '',
    `| database | first sync s (${toolCount} created) | every vector stored s after it | index texts/s | unchanged re-sync s (median of ${runs}) | target <= ${TARGETS.unchanged} s | ${changedCount} changed s (median) | target <= ${TARGETS.changed} s | changed re-indexed s | errors |`,
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of reports) {
    const unchanged = median(r.unchangedSeconds);
    const edit = median(r.changedSeconds);
    out.push(
      `| ${r.driver} | ${r.firstSyncSeconds} | ${r.everyVectorSeconds} | ${r.indexTextsPerSecond ?? '-'} | ${unchanged} (${r.unchangedSeconds.join(', ')}) | ${verdict(unchanged, TARGETS.unchanged)} | ${edit} (${r.changedSeconds.join(', ')}) | ${verdict(edit, TARGETS.changed)} | ${r.changedReindexSeconds} | ${r.errors} |`,
    );
  }
  return `${out.join('\n')}\n`;
}

const fake = new FakeEmbeddingServer();
const embeddingUrl = await fake.start();
const token = await new SignJWT({ tenant_id: TENANT, scope: 'registry:publish' })
  .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
  .setSubject('bench')
  .setIssuedAt()
  .setExpirationTime('6h')
  .sign(new TextEncoder().encode(secret));
const catalog = generateRealTools(Number(opts.seed), 0, toolCount);
const bytes = Buffer.byteLength(JSON.stringify({ source: SOURCE, tools: catalog }));
const load = loadavg().map((x) => x.toFixed(2)).join(' ');
log(`${toolCount} real-shaped tools, ${(bytes / 1024 / 1024).toFixed(2)} MiB per sync body; load average ${load}`);
const reports: DriverReport[] = [];
let postgres: PostgresServer | undefined;
try {
  for (const driver of drivers) {
    const env: Record<string, string> = {
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      JWT_SECRET: secret,
      RATE_LIMIT_PUBLISH_PER_MINUTE: '0',
      ...(opts.embedder === 'local'
        ? { EMBEDDING_PROVIDER: 'local', ...(opts.threads ? { EMBEDDING_LOCAL_THREADS: opts.threads } : {}) }
        : { EMBEDDING_PROVIDER: 'openai', EMBEDDING_URL: embeddingUrl, EMBEDDING_MODEL: 'bench-hash-512' }),
    };
    const dataDir = mkdtempSync(join(tmpdir(), 'tool-registry-bench-sync-'));
    let socket: Child | undefined;
    const name = `bench_sync_${process.pid}`;
    try {
      if (driver === 'embedded') reports.push(await measure('embedded PGlite', { ...env, DATA_DIR: dataDir }, token, catalog));
      if (driver === 'socket') {
        const served = await startSocketDatabase(dataDir, 8);
        socket = served.child;
        reports.push(await measure('PGlite over the wire (pool 8)', { ...env, DATABASE_URL: served.url, DATABASE_POOL_SIZE: '8' }, token, catalog));
      }
      if (driver === 'postgres') {
        postgres ??= await startPostgres(process.env.DATABASE_URL);
        const url = await freshDatabase(postgres, name);
        reports.push(await measure('native PostgreSQL', { ...env, DATABASE_URL: url }, token, catalog));
      }
    } finally {
      await socket?.stop();
      if (driver === 'postgres' && postgres) await dropDatabase(postgres, name);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
} finally {
  await postgres?.stop();
  await fake.stop();
}
const meta = {
  command: `npm run bench:sync -- ${process.argv.slice(2).join(' ')}`.trim(),
  started: `${new Date().toISOString()}, Node ${process.version}, ${cpus().length} CPUs, load average at start ${load}`,
  catalog: `${toolCount} real-shaped tools (scripts/bench/real-catalog.ts, seed ${opts.seed}), ${(bytes / 1024 / 1024).toFixed(2)} MiB per sync body, one source`,
  embedder: opts.embedder === 'local' ? `the real local encoder in the service (EMBEDDING_LOCAL_THREADS ${opts.threads ?? 'default'})` : 'loopback OpenAI-compatible hashing embedder (512-d)',
  timing: 'each sync end to end from the client (serialize, send, server work, answer); re-syncs start once every vector is stored',
};
const report = markdown(reports, meta);
mkdirSync(opts.out, { recursive: true });
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
writeFileSync(join(opts.out, `sync-${stamp}.json`), `${JSON.stringify({ meta, reports }, null, 2)}\n`);
writeFileSync(join(opts.out, `sync-${stamp}.md`), report);
console.log(report);
process.exit(0);
