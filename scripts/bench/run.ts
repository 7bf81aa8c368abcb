/**
 * `npm run bench`: registers deterministic synthetic catalogs through the real HTTP API of the real
 * server (a child process), then drives /v1/discover and /v1/authorize with autocannon, on the
 * embedded database and on PGlite over the wire. Loopback only, bounded in time.
 * Options: see `npm run bench -- --help`.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Command } from 'commander';
import { SignJWT } from 'jose';

import { renderTool } from '../../src/discovery/formats.js';
import { keywordOverlapRank } from '../../src/eval/keyword-baseline.js';
import { type BenchTool, callerScopes, generateTools, requestText, validArguments, visible } from './catalog.js';
import { FakeEmbeddingServer } from './fake-embedder.js';
import { drive, type LoadResult, stageSplit } from './load.js';
import { type Child, freePort, memoryOf, startService, startSocketDatabase } from './processes.js';
import { type BenchReport, markdownReport, type SizeReport } from './report.js';

/* eslint-disable no-console -- a script's output is its interface */

const program = new Command('bench')
  .option('--sizes <list>', 'catalog sizes: tools in the benchmark tenant (100000 is opt-in: long)', '1000,10000')
  .option('--tenants <n>', 'tenants (the others hold 1% of the size each, at least 50 tools)', '20')
  .option('--seconds <n>', 'duration of each load run', '5')
  .option('--concurrency <list>', 'concurrent connections', '1,8,32')
  .option('--drivers <list>', 'embedded (PGlite in the server) and/or socket (PGlite over the wire, or DATABASE_URL when set)', 'embedded,socket')
  .option('--seed <n>', 'catalog seed', '42')
  .option('--socket-connections <n>', 'PGLiteSocketServer maxConnections, and the service pool size (DATABASE_POOL_SIZE)', '8')
  .option('--cpu-prof <dir>', 'run the server with --cpu-prof, profiles written to this folder')
  .option('--local-model', 'also measure the local embedding model on new request texts (in-process)', true)
  .option('--no-local-model', 'skip the local model measurement')
  .option('--out <dir>', 'output folder', 'bench-results')
  .option('--label <text>', 'label of this run in the report', '');
program.parse();
const opts = program.opts<{
  sizes: string;
  tenants: string;
  seconds: string;
  concurrency: string;
  drivers: string;
  seed: string;
  socketConnections: string;
  cpuProf?: string;
  localModel: boolean;
  out: string;
  label: string;
}>();

const list = (s: string) => s.split(',').map((x) => x.trim()).filter(Boolean);
const sizes = list(opts.sizes).map(Number);
const concurrencies = list(opts.concurrency).map(Number);
const drivers = list(opts.drivers) as ('embedded' | 'socket')[];
const seconds = Number(opts.seconds);
const seed = Number(opts.seed);
const tenantCount = Number(opts.tenants);
const secret = randomBytes(32).toString('base64url');
const externalUrl = process.env.DATABASE_URL;
const REPEATED = 50;

const log = (message: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const tenantId = (i: number) => `bench-t${String(i).padStart(2, '0')}`;

async function mint(tenant: string, scopes: string[]): Promise<string> {
  return new SignJWT({ tenant_id: tenant, scope: scopes.join(' ') })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject('bench')
    .setIssuedAt()
    .setExpirationTime('6h')
    .sign(new TextEncoder().encode(secret));
}

/** Registers every tool through POST /v1/tools with `workers` concurrent requests. */
async function register(base: string, catalogs: { tenant: string; token: string; tools: BenchTool[] }[], workers = 8) {
  const jobs = catalogs.flatMap((c) => c.tools.map((tool) => ({ token: c.token, tool })));
  let next = 0;
  let failed = 0;
  let firstError = '';
  const started = performance.now();
  let lastReport = started;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (next < jobs.length) {
        const job = jobs[next++]!;
        const response = await fetch(`${base}/v1/tools`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${job.token}` },
          body: JSON.stringify(job.tool),
        }).catch((error: unknown) => new Response(`request failed: ${String(error)}`, { status: 599 }));
        if (response.status !== 201) {
          failed += 1;
          firstError ||= `${response.status} ${(await response.text()).slice(0, 300)}`;
        } else await response.arrayBuffer();
        if (performance.now() - lastReport > 10_000) {
          lastReport = performance.now();
          log(`registered ${next}/${jobs.length}`);
        }
      }
    }),
  );
  const ms = performance.now() - started;
  if (failed > 0) log(`registration failures: ${failed}; first: ${firstError}`);
  return { tools: jobs.length, failed, seconds: round(ms / 1000, 1), toolsPerSecond: round((jobs.length / ms) * 1000, 1) };
}

async function waitIndexed(embedder: FakeEmbeddingServer, expectedTexts: number, timeoutMs: number): Promise<number> {
  const started = performance.now();
  let last = -1;
  let lastChange = started;
  while (embedder.embedded < expectedTexts) {
    if (embedder.embedded !== last) {
      last = embedder.embedded;
      lastChange = performance.now();
    }
    if (performance.now() - started > timeoutMs || performance.now() - lastChange > 30_000) {
      throw new Error(`indexing stalled: ${embedder.embedded}/${expectedTexts} texts embedded`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  // The last batch's vectors are written after the embedder answered.
  await new Promise((r) => setTimeout(r, 1_000));
  return performance.now() - started;
}

const scrape = async (base: string) => (await fetch(`${base}/metrics`)).text();

interface Scenario {
  name: string;
  concurrency: number;
  result: LoadResult;
  stages?: Record<string, number>;
}

/** The load runs on one started service. */
async function loadScenarios(base: string, server: Child, caller: string, visibleTools: BenchTool[], streamBase: number): Promise<{ scenarios: Scenario[]; authorize: string }> {
  const scenarios: Scenario[] = [];
  const repeated = Array.from({ length: REPEATED }, (_, i) => requestText(seed + 1, i));
  const discoverBody = (query: string) => ({ query, top_k: 3, format: 'openai' });
  // Warm-up: fills the query-embedding cache with the repeated texts and warms the JIT and the database.
  await drive({ url: base, path: '/v1/discover', token: caller, connections: 8, seconds: 2, body: (i) => discoverBody(repeated[i % REPEATED]!) });

  let stream = streamBase;
  for (const kind of ['cached', 'new'] as const) {
    for (const connections of concurrencies) {
      const before = await scrape(base);
      const offset = stream;
      const result = await drive({
        url: base,
        path: '/v1/discover',
        token: caller,
        connections,
        seconds,
        body: (i) => discoverBody(kind === 'cached' ? repeated[i % REPEATED]! : requestText(seed + 2, offset + i)),
      });
      stream += 1_000_000;
      const stages = stageSplit(before, await scrape(base));
      scenarios.push({ name: `discover ${kind}`, concurrency: connections, result, stages });
      log(`discover ${kind} c=${connections}: p50 ${result.p50} ms p99 ${result.p99} ms ${result.rps} req/s (non-2xx ${result.non2xx})`);
    }
  }

  const probe = await fetch(`${base}/v1/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${caller}` },
    body: JSON.stringify({ tool: visibleTools[0]!.name, arguments: validArguments(visibleTools[0]!) }),
  });
  let authorize = `answered ${probe.status}`;
  if (probe.status === 404 && !(await probe.text()).includes('tool')) {
    authorize = 'skipped: POST /v1/authorize is not available (404) in this build';
    log(authorize);
  } else {
    const sample = visibleTools.slice(0, 200);
    for (const connections of concurrencies) {
      const result = await drive({
        url: base,
        path: '/v1/authorize',
        token: caller,
        connections,
        seconds,
        body: (i) => {
          const tool = sample[i % sample.length]!;
          return { tool: tool.name, arguments: validArguments(tool) };
        },
      });
      scenarios.push({ name: 'authorize', concurrency: connections, result });
      log(`authorize c=${connections}: p50 ${result.p50} ms p99 ${result.p99} ms ${result.rps} req/s (non-2xx ${result.non2xx})`);
    }
  }
  void server;
  return { scenarios, authorize };
}

/** The payload the product replaces: every schema the caller may use, sent each turn. */
function catalogBaseline(visibleTools: BenchTool[]) {
  const bytes = Buffer.byteLength(JSON.stringify(visibleTools.map((t) => renderTool({ ...t, returns: null }, 'openai'))));
  const sampleQueries = Array.from({ length: 200 }, (_, i) => requestText(seed + 3, i));
  const times: number[] = [];
  for (const query of sampleQueries) {
    const started = performance.now();
    keywordOverlapRank(query, visibleTools, 3);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { catalogBytes: bytes, keywordP50: round(times[Math.floor(times.length * 0.5)]!, 3), keywordP95: round(times[Math.floor(times.length * 0.95)]!, 3) };
}

/** Mean shortlist size of real discover answers, and the catalog token count the service reports. */
async function shortlistSample(base: string, caller: string) {
  let bytes = 0;
  let tokens = 0;
  let catalogTokens = 0;
  const n = 20;
  for (let i = 0; i < n; i += 1) {
    const response = await fetch(`${base}/v1/discover`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${caller}` },
      body: JSON.stringify({ query: requestText(seed + 4, i), top_k: 3, format: 'openai' }),
    });
    const body = (await response.json()) as { tools: { schema: unknown }[]; tokens: { shortlist: number; catalog: number } };
    bytes += Buffer.byteLength(JSON.stringify(body.tools.map((t) => t.schema)));
    tokens += body.tokens.shortlist;
    catalogTokens = body.tokens.catalog;
  }
  return { shortlistBytes: Math.round(bytes / n), shortlistTokens: Math.round(tokens / n), catalogTokens };
}

async function localModelCost() {
  const { LocalEmbedder } = await import('../../src/embedding/local.js');
  const embedder = await LocalEmbedder.load();
  const times: number[] = [];
  for (let i = 0; i < 60; i += 1) {
    const started = performance.now();
    await embedder.embed([requestText(seed + 5, i)]);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: round(times[30]!), p95: round(times[56]!) };
}

async function benchSize(size: number, embedder: FakeEmbeddingServer, embeddingUrl: string): Promise<SizeReport> {
  const dataDir = mkdtempSync(join(tmpdir(), `tool-registry-bench-${size}-`));
  const scopes = callerScopes();
  const scopeSet = new Set(scopes);
  const catalogs = await Promise.all(
    Array.from({ length: tenantCount }, async (_, t) => ({
      tenant: tenantId(t),
      token: await mint(tenantId(t), ['registry:publish']),
      tools: generateTools(seed, t, t === 0 ? size : Math.max(50, Math.round(size / 100))),
    })),
  );
  const benchTenant = catalogs[0]!;
  const visibleTools = benchTenant.tools.filter((t) => visible(t, scopeSet));
  const caller = await mint(benchTenant.tenant, scopes);
  const expectedTexts = catalogs.reduce((n, c) => n + c.tools.reduce((m, t) => m + 1 + t.aliases.length + t.examples.length, 0), 0);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const serviceEnv: Record<string, string> = {
    PORT: String(port),
    HOST: '127.0.0.1',
    JWT_SECRET: secret,
    EMBEDDING_PROVIDER: 'openai',
    EMBEDDING_URL: embeddingUrl,
    EMBEDDING_MODEL: 'bench-hash-512',
    // One caller drives the load: per-principal rate limits would answer 429 within a second.
    RATE_LIMIT_DISCOVER_PER_MINUTE: '0',
    RATE_LIMIT_AUTHORIZE_PER_MINUTE: '0',
    RATE_LIMIT_MCP_PER_MINUTE: '0',
  };
  const profArgs = (leg: string) => (opts.cpuProf ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProf}`, `--cpu-prof-name=server-${size}-${leg}-${Date.now()}.cpuprofile`] : []);
  const report: SizeReport = { size, tenants: tenantCount, totalTools: catalogs.reduce((n, c) => n + c.tools.length, 0), visibleTools: visibleTools.length, legs: [] };

  try {
    log(`size ${size}: ${report.totalTools} tools over ${tenantCount} tenants (${visibleTools.length} visible to the caller); registering`);
    const useExternal = externalUrl !== undefined;
    const populateEnv = useExternal ? { ...serviceEnv, DATABASE_URL: externalUrl } : { ...serviceEnv, DATA_DIR: dataDir };
    const first = await startService(populateEnv);
    embedder.embedded = 0;
    try {
      report.registration = await register(base, catalogs);
      log(`registered ${report.registration.tools} tools at ${report.registration.toolsPerSecond} tools/s; waiting for vectors`);
      report.indexingSeconds = round((await waitIndexed(embedder, expectedTexts, 3_600_000)) / 1000 + report.registration.seconds, 1);
      log(`indexed ${expectedTexts} texts, ${report.indexingSeconds} s after registration began`);
      Object.assign(report, catalogBaseline(visibleTools), await shortlistSample(base, caller));
    } finally {
      await first.child.stop();
    }

    let stream = 0;
    for (const driver of drivers) {
      let database: Child | undefined;
      let env: Record<string, string>;
      let label: string;
      if (driver === 'embedded') {
        if (useExternal) continue;
        env = { ...serviceEnv, DATA_DIR: dataDir };
        label = 'embedded PGlite';
      } else if (useExternal) {
        env = { ...serviceEnv, DATABASE_URL: externalUrl };
        label = 'external PostgreSQL (DATABASE_URL)';
      } else {
        const socket = await startSocketDatabase(dataDir, Number(opts.socketConnections));
        database = socket.child;
        // The pool must not open more connections than the socket server accepts.
        env = { ...serviceEnv, DATABASE_URL: socket.url, DATABASE_POOL_SIZE: opts.socketConnections };
        label = `PGlite over the wire (pglite-socket, maxConnections ${opts.socketConnections})`;
      }
      const { child, startupMs } = await startService(env, profArgs(driver));
      log(`${label}: started in ${Math.round(startupMs)} ms`);
      try {
        const { scenarios, authorize } = await loadScenarios(base, child, caller, visibleTools, (stream += 10_000_000));
        report.legs.push({
          driver: label,
          startupMs: Math.round(startupMs),
          serverPeakRssMiB: round(memoryOf(child.pid).peakMiB, 1),
          databasePeakRssMiB: database ? round(memoryOf(database.pid).peakMiB, 1) : undefined,
          authorize,
          scenarios,
        });
      } finally {
        await child.stop();
        await database?.stop();
      }
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return report;
}

const commandLine = `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim();
const embedder = new FakeEmbeddingServer();
const embeddingUrl = await embedder.start();
const report: BenchReport = {
  label: opts.label,
  commandLine,
  startedAt: new Date().toISOString(),
  node: process.version,
  cpus: (await import('node:os')).cpus().length,
  seconds,
  embedder: 'loopback OpenAI-compatible hashing embedder (512-d); see localModel for the real model cost',
  sizes: [],
};
try {
  if (opts.localModel) {
    report.localModel = await localModelCost();
    log(`local model (use-lite-512) query embedding: p50 ${report.localModel.p50} ms p95 ${report.localModel.p95} ms`);
  }
  for (const size of sizes) report.sizes.push(await benchSize(size, embedder, embeddingUrl));
} finally {
  await embedder.stop();
}
mkdirSync(opts.out, { recursive: true });
const stamp = report.startedAt.replace(/[:.]/g, '-');
const markdown = markdownReport(report);
writeFileSync(join(opts.out, `bench-${stamp}.json`), `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(join(opts.out, `bench-${stamp}.md`), markdown);
writeFileSync(join(opts.out, 'latest.md'), markdown);
console.log(markdown);
log(`wrote ${join(opts.out, `bench-${stamp}.md`)} and .json`);
process.exit(0);
