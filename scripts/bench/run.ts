/**
 * `npm run bench`: registers a deterministic catalog through the real HTTP API of the real server
 * (a child process), then drives /v1/discover and /v1/authorize with autocannon, on embedded
 * PGlite, PGlite over the wire and native PostgreSQL, optionally for a baseline checkout too, so
 * before and after come from one run on the same catalog and load. The service embeds with its
 * real local encoder unless `--embedder loopback`. Loopback network only, bounded in time.
 * Options: see `npm run bench -- --help`.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Command } from 'commander';

import { PlainBm25 } from '../../src/eval/plain-bm25.js';
import { renderTool } from '../../src/tools/formats.js';
import { type BenchTool, callerScopes, generateTools, requestText, validArguments, visible } from './catalog.js';
import { FakeEmbeddingServer } from './fake-embedder.js';
import { benchToken, drive } from './load.js';
import { databaseUrl, dropDatabase, freshDatabase, type PostgresServer, startPostgres, toolsWithoutVectors, vacuumAnalyze, vectorIndexReady } from './postgres.js';
import { type Child, cpuSecondsOf, freePort, memoryOf, startService, startSocketDatabase } from './processes.js';
import { generateRealTools, realCallerScopes, realRequestText, realValidArguments, smallTenantSize } from './real-catalog.js';
import { type BenchReport, type Driver, type DuringIndexing, markdownReport, type Registration, type Scenario, type SizeReport } from './report.js';
import { stageSplit } from './stages.js';

/* eslint-disable no-console -- a script's output is its interface */

const program = new Command('bench')
  .option('--catalog <kind>', 'real (long real-shaped definitions, one big tenant and many small ones, 15-30 word requests) or synthetic (short cards, 20 equal tenants)', 'real')
  .option('--sizes <list>', 'catalog sizes: tools in the benchmark tenant (100000 is opt-in: long)', '1000,10000')
  .option('--tenants <n>', 'tenants (default: real 40, synthetic 20); real: the others hold 0.1-1% of the size each, synthetic: 1%, at least 50')
  .option('--seconds <n>', 'duration of each load run', '5')
  .option('--concurrency <list>', 'concurrent connections', '1,8,32')
  .option('--drivers <list>', 'embedded (PGlite in the server), socket (PGlite over the wire), postgres (native; DATABASE_URL or scripts/postgres.sh)', 'embedded,socket,postgres')
  .option('--server-dir <dir>', 'run the service of this checkout (default: this one)')
  .option('--baseline <dir>', 'also run every leg with the service of this checkout ("before"), same catalog and load')
  .option('--embedder <kind>', 'local (the real in-process encoder, for tool vectors and new requests: what a deployment measures) or loopback (a hashing embedder over HTTP: indexes in seconds and keeps the encoder out of the figures, for isolating the database)', 'local')
  .option('--index-threads <n>', 'EMBEDDING_LOCAL_THREADS of the service: encoder threads for indexing with the local encoder (default: the service default)')
  .option('--during-indexing', 'run a discover load (new requests, c=1, --seconds long) right after registration, while vectors are still being stored (default: on with the local encoder, off with loopback)')
  .option('--no-during-indexing', 'skip the discover load during indexing')
  .option('--workers <n>', 'concurrent registration clients', '8')
  .option('--seed <n>', 'catalog seed', '42')
  .option('--socket-connections <n>', 'PGLiteSocketServer maxConnections, and the service pool size (DATABASE_POOL_SIZE)', '8')
  .option('--pool-size <n>', 'DATABASE_POOL_SIZE of the service on native PostgreSQL (default: the service default)')
  .option('--cpu-prof <dir>', 'run the server with --cpu-prof, profiles written to this folder')
  .option('--local-model', 'also measure the local embedding model on request texts and card texts (in-process)', true)
  .option('--no-local-model', 'skip the local model measurement')
  .option('--keep-database', 'leave the native PostgreSQL databases in place after the run, for profiling (their URLs are logged; needs DATABASE_URL)')
  .option('--out <dir>', 'output folder', 'bench-results')
  .option('--label <text>', 'label of this run in the report', '');
program.parse();
const opts = program.opts<{
  catalog: string;
  sizes: string;
  tenants?: string;
  seconds: string;
  concurrency: string;
  drivers: string;
  serverDir?: string;
  baseline?: string;
  embedder: string;
  indexThreads?: string;
  duringIndexing?: boolean;
  workers: string;
  seed: string;
  socketConnections: string;
  poolSize?: string;
  cpuProf?: string;
  localModel: boolean;
  keepDatabase?: boolean;
  out: string;
  label: string;
}>();

const list = (s: string) => s.split(',').map((x) => x.trim()).filter(Boolean);
const sizes = list(opts.sizes).map(Number);
const concurrencies = list(opts.concurrency).map(Number);
const drivers = list(opts.drivers) as Driver[];
for (const d of drivers) if (!['embedded', 'socket', 'postgres'].includes(d)) throw new Error(`unknown driver ${d}`);
if (!['real', 'synthetic'].includes(opts.catalog)) throw new Error(`unknown catalog ${opts.catalog}`);
if (!['loopback', 'local'].includes(opts.embedder)) throw new Error(`unknown embedder ${opts.embedder}`);
if (opts.indexThreads !== undefined && !/^[1-9]\d*$/.test(opts.indexThreads)) throw new Error(`--index-threads must be a positive integer, not ${opts.indexThreads}`);
// Loopback indexes a catalog in seconds, so by default it measures as it always did: no load during indexing.
const duringIndexing = opts.duringIndexing ?? opts.embedder === 'local';
// Without DATABASE_URL the bench's own PostgreSQL (scripts/postgres.sh) is removed at exit, kept databases with it.
if (opts.keepDatabase && !process.env.DATABASE_URL) throw new Error('--keep-database needs DATABASE_URL: the PostgreSQL the bench starts itself is removed when it exits');
const real = opts.catalog === 'real';
const seconds = Number(opts.seconds);
const seed = Number(opts.seed);
const tenantCount = Number(opts.tenants ?? (real ? 40 : 20));
const secret = randomBytes(32).toString('base64url');
const REPEATED = 50;
// The indexer builds the HNSW index once a tenant has this many tools (the service's default).
const VECTOR_INDEX_MIN_TOOLS = Number(process.env.VECTOR_INDEX_MIN_TOOLS ?? 1000);
const HERE = fileURLToPath(new URL('../..', import.meta.url));
const servers = [
  ...(opts.baseline ? [{ label: 'before', root: resolve(opts.baseline) }] : []),
  { label: opts.baseline ? 'after' : '', root: resolve(opts.serverDir ?? HERE) },
];

/** The catalog kind's generators. */
const catalog = real
  ? { tools: generateRealTools, scopes: realCallerScopes, request: realRequestText, args: realValidArguments, smallSize: (t: number, size: number) => smallTenantSize(seed, t, size) }
  : { tools: generateTools, scopes: callerScopes, request: requestText, args: validArguments, smallSize: (_: number, size: number) => Math.max(50, Math.round(size / 100)) };

const log = (message: string) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const tenantId = (i: number) => `bench-t${String(i).padStart(2, '0')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const mint = (tenant: string, scopes: string[]): Promise<string> => benchToken(secret, 'bench', tenant, scopes);

interface Catalog {
  tenant: string;
  token: string;
  tools: BenchTool[];
}

/** Registers every tool through POST /v1/tools with `workers` concurrent requests. */
async function register(base: string, catalogs: Catalog[], workers: number) {
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

/** Waits until `remaining()` reaches 0; fails when it stops moving for `stallMs`. */
async function waitUntilDone(remaining: () => Promise<number>, stallMs: number): Promise<void> {
  let last = Number.POSITIVE_INFINITY;
  let lastChange = performance.now();
  for (;;) {
    const left = await remaining();
    if (left <= 0) return;
    if (left !== last) {
      last = left;
      lastChange = performance.now();
    } else if (performance.now() - lastChange > stallMs) throw new Error(`indexing stalled with ${left} left`);
    await sleep(250);
  }
}

/** Waits until the server's CPU stays idle (< 5% of a core over 3 s): indexing with an in-process encoder is CPU-bound. */
async function waitCpuIdle(pid: number): Promise<void> {
  let previous = cpuSecondsOf(pid);
  for (;;) {
    await sleep(3_000);
    const now = cpuSecondsOf(pid);
    if (now - previous < 0.15) return;
    previous = now;
  }
}

/** fetch, retried once on a network error (a keep-alive socket the server closed while idle). */
async function request(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch {
    await sleep(200);
    return fetch(url, init);
  }
}

const scrape = async (base: string) => (await request(`${base}/metrics`)).text();

/** The load runs on one started service. */
async function loadScenarios(base: string, caller: string, otherCaller: string, visibleTools: BenchTool[], streamBase: number): Promise<{ scenarios: Scenario[]; authorize: string }> {
  const scenarios: Scenario[] = [];
  const repeated = Array.from({ length: REPEATED }, (_, i) => catalog.request(seed + 1, i));
  const discoverBody = (query: string) => ({ query, top_k: 3, format: 'openai' });
  // Warm-up: every repeated text once (the service's query-embedding and shortlist caches), then
  // load for the JIT and the database. Load alone reached only the texts it had time for.
  for (const query of repeated) {
    const response = await request(`${base}/v1/discover`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${caller}` }, body: JSON.stringify(discoverBody(query)) });
    await response.arrayBuffer();
  }
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
        body: (i) => discoverBody(kind === 'cached' ? repeated[i % REPEATED]! : catalog.request(seed + 2, offset + i)),
      });
      stream += 1_000_000;
      const split = stageSplit(before, await scrape(base));
      scenarios.push({ name: `discover ${kind}`, concurrency: connections, result, stages: split.mean, stageP50: split.p50, searchModes: split.modes });
      log(`discover ${kind} c=${connections}: p50 ${result.p50} ms p99 ${result.p99} ms ${result.rps} req/s (errors ${result.non2xx + result.errors})`);
    }
  }

  // Another tenant's new requests at c=1 while the benchmark tenant sends new ones at the highest
  // concurrency: what one tenant's burst costs the others (the query encoder and the database are shared).
  const flood = Math.max(...concurrencies);
  if (flood > 1) {
    const offset = stream;
    const before = await scrape(base);
    const [result] = await Promise.all([
      drive({ url: base, path: '/v1/discover', token: otherCaller, connections: 1, seconds, body: (i) => discoverBody(catalog.request(seed + 5, offset + i)) }),
      drive({ url: base, path: '/v1/discover', token: caller, connections: flood, seconds, body: (i) => discoverBody(catalog.request(seed + 2, offset + 1_000_000 + i)) }),
    ]);
    const split = stageSplit(before, await scrape(base));
    scenarios.push({ name: `discover new, another tenant, during c=${flood} new`, concurrency: 1, result, stages: split.mean, stageP50: split.p50, searchModes: split.modes });
    log(`discover new, another tenant, c=1 during c=${flood} new: p50 ${result.p50} ms p99 ${result.p99} ms ${result.rps} req/s (errors ${result.non2xx + result.errors})`);
  }

  const probe = await request(`${base}/v1/authorize`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${caller}` },
    body: JSON.stringify({ tool: visibleTools[0]!.name, arguments: catalog.args(visibleTools[0]!) }),
  });
  const probeBody = await probe.text();
  let authorize = `answered ${probe.status}${probe.ok && !probeBody.includes('"allow"') ? ` (not allow: ${probeBody.slice(0, 200)})` : ''}`;
  if (probe.status === 404 && !probeBody.includes('tool')) {
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
          return { tool: tool.name, arguments: catalog.args(tool) };
        },
      });
      scenarios.push({ name: 'authorize', concurrency: connections, result });
      log(`authorize c=${connections}: p50 ${result.p50} ms p99 ${result.p99} ms ${result.rps} req/s (errors ${result.non2xx + result.errors})`);
    }
  }
  return { scenarios, authorize };
}

/**
 * Tools still without a vector, service-wide: counted in PostgreSQL when the bench has its URL,
 * else the service's own index backlog (GET /v1/catalog/index-status; unknown on a service without it).
 */
async function pendingVectors(base: string, publisher: string, pgUrl: string | undefined, model: string): Promise<{ n: number; from: string } | undefined> {
  if (pgUrl) return { n: await toolsWithoutVectors(pgUrl, model), from: 'PostgreSQL count' };
  const response = await request(`${base}/v1/catalog/index-status`, { headers: { authorization: `Bearer ${publisher}` } });
  if (!response.ok) {
    await response.arrayBuffer();
    return undefined;
  }
  const body = (await response.json()) as { backlog?: number };
  return typeof body.backlog === 'number' ? { n: body.backlog, from: 'index-status backlog' } : undefined;
}

/**
 * New requests at c=1 for `seconds`, started right after registration while the indexer is still
 * storing vectors: what a caller gets from a service that is busy indexing.
 */
async function discoverDuringIndexing(base: string, ctx: SizeContext, pgUrl: string | undefined, model: string, stream: number): Promise<DuringIndexing> {
  const publisher = ctx.catalogs[0]!.token;
  const atStart = await pendingVectors(base, publisher, pgUrl, model).catch(() => undefined);
  const before = await scrape(base);
  const result = await drive({
    url: base,
    path: '/v1/discover',
    token: ctx.caller,
    connections: 1,
    seconds,
    body: (i) => ({ query: catalog.request(seed + 2, stream + i), top_k: 3, format: 'openai' }),
  });
  const split = stageSplit(before, await scrape(base));
  const atEnd = await pendingVectors(base, publisher, pgUrl, model).catch(() => undefined);
  log(`discover during indexing c=1: p50 ${result.p50} ms p99 ${result.p99} ms ${result.rps} req/s (errors ${result.non2xx + result.errors}); tools without a vector ${atStart?.n ?? '?'} -> ${atEnd?.n ?? '?'}`);
  return {
    name: 'discover during indexing',
    concurrency: 1,
    result,
    stages: split.mean,
    stageP50: split.p50,
    searchModes: split.modes,
    ...(atStart ? { pendingAtStart: atStart.n, pendingFrom: atStart.from } : {}),
    ...(atEnd ? { pendingAtEnd: atEnd.n } : {}),
  };
}

/** The payload the product replaces: every schema the caller may use, sent each turn. */
function catalogBaseline(visibleTools: BenchTool[]) {
  const bytes = Buffer.byteLength(JSON.stringify(visibleTools.map((t) => renderTool({ ...t, summary: t.summary ?? '', returns: null }, 'openai'))));
  // The naive loop is linear in the catalog: fewer samples for huge ones.
  const sampleQueries = Array.from({ length: visibleTools.length > 20_000 ? 30 : 200 }, (_, i) => catalog.request(seed + 3, i));
  const times: number[] = [];
  // Its index is built once, as a keyword search in the agent's process would be.
  const floor = new PlainBm25(visibleTools);
  for (const query of sampleQueries) {
    const started = performance.now();
    floor.rank(query, 3);
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
    const response = await request(`${base}/v1/discover`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${caller}` },
      body: JSON.stringify({ query: catalog.request(seed + 4, i), top_k: 3, format: 'openai' }),
    });
    const body = (await response.json()) as { tools: { schema: unknown }[]; tokens: { shortlist: number; catalog: number } };
    bytes += Buffer.byteLength(JSON.stringify(body.tools.map((t) => t.schema)));
    tokens += body.tokens.shortlist;
    catalogTokens = body.tokens.catalog;
  }
  return { shortlistBytes: Math.round(bytes / n), shortlistTokens: Math.round(tokens / n), catalogTokens };
}

/** The local encoder in this process: latency of one request text, throughput on card texts. */
async function localModelCost(cardTexts: string[]) {
  const { LocalEmbedder } = await import('../../src/embedding/local.js');
  const embedder = await LocalEmbedder.load();
  try {
    const times: number[] = [];
    for (let i = 0; i < 60; i += 1) {
      const started = performance.now();
      await embedder.embed([catalog.request(seed + 5, i)]);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const started = performance.now();
    for (let i = 0; i < cardTexts.length; i += 64) await embedder.embed(cardTexts.slice(i, i + 64));
    const textsPerSecond = round(cardTexts.length / ((performance.now() - started) / 1000), 1);
    const meanChars = Math.round(cardTexts.reduce((n, t) => n + t.length, 0) / cardTexts.length);
    return { p50: round(times[30]!), p95: round(times[56]!), textsPerSecond, texts: cardTexts.length, meanChars };
  } finally {
    await (embedder as { close?: () => Promise<void> }).close?.();
  }
}

/** The texts the service embeds for a tool (card text, then aliases and examples). */
const cardTexts = (tool: BenchTool) => [`${tool.name}: ${tool.description}`, ...tool.aliases, ...tool.examples];

/** Environment every service gets; the embedder part depends on --embedder. */
function serviceEnvironment(port: number, embeddingUrl: string): Record<string, string> {
  return {
    PORT: String(port),
    HOST: '127.0.0.1',
    JWT_SECRET: secret,
    ...(opts.embedder === 'local'
      ? { EMBEDDING_PROVIDER: 'local', ...(opts.indexThreads ? { EMBEDDING_LOCAL_THREADS: opts.indexThreads } : {}) }
      : { EMBEDDING_PROVIDER: 'openai', EMBEDDING_URL: embeddingUrl, EMBEDDING_MODEL: 'bench-hash-512' }),
    // One caller drives the load: per-principal rate limits would answer 429 within a second.
    RATE_LIMIT_DISCOVER_PER_MINUTE: '0',
    RATE_LIMIT_AUTHORIZE_PER_MINUTE: '0',
    RATE_LIMIT_MCP_PER_MINUTE: '0',
    RATE_LIMIT_PUBLISH_PER_MINUTE: '0',
  };
}

interface SizeContext {
  size: number;
  catalogs: Catalog[];
  caller: string;
  /** A caller of another tenant (one of the small ones), for what the benchmark tenant's load costs it. */
  otherCaller: string;
  visibleTools: BenchTool[];
  expectedTexts: number;
  report: SizeReport;
}

/**
 * Registers the catalog with one server on one database and waits until every vector exists:
 * counted by the loopback embedder, or read from PostgreSQL, or (local encoder on PGlite) until
 * the server's CPU goes idle.
 */
async function populate(ctx: SizeContext, server: { label: string; root: string }, database: string, env: Record<string, string>, embedder: FakeEmbeddingServer, stream: number, pgUrl?: string): Promise<Registration> {
  const { child } = await startService(env, profileArgs(`${ctx.size}-register-${server.label}-${database}`), server.root);
  embedder.embedded = 0;
  try {
    const base = `http://127.0.0.1:${env.PORT}`;
    log(`${server.label || 'service'} on ${database}: registering ${ctx.report.totalTools} tools`);
    const registration = await register(base, ctx.catalogs, Number(opts.workers));
    const waitStarted = performance.now();
    log(`registered at ${registration.toolsPerSecond} tools/s; waiting for vectors`);
    // The service's model names: the local encoder's own, an OpenAI-compatible provider's prefixed.
    const model = opts.embedder === 'local' ? 'use-lite-512' : 'openai:bench-hash-512';
    // Runs while the waits below poll, so the vector count is not held up by it.
    const during = duringIndexing
      ? discoverDuringIndexing(base, ctx, pgUrl, model, stream).catch((error: unknown) => {
          log(`discover during indexing failed: ${(error as Error).message}`);
          return undefined;
        })
      : undefined;
    let how: Registration['indexedBy'];
    if (opts.embedder === 'loopback' && !during) {
      await waitUntilDone(async () => ctx.expectedTexts - embedder.embedded, 60_000);
      how = 'loopback embedder count';
      // Texts the embedder answered are not vectors stored (at 100,000 tools the count was reached
      // with 23,000 tools still without vectors): on PostgreSQL, count the stored ones.
      if (pgUrl) {
        await waitUntilDone(() => toolsWithoutVectors(pgUrl, model), 120_000);
        how = 'PostgreSQL: every active tool has a card vector';
      }
    } else if (pgUrl) {
      await waitUntilDone(() => toolsWithoutVectors(pgUrl, model), 120_000);
      how = 'PostgreSQL: every active tool has a card vector';
    } else {
      // The load keeps the CPU busy and (loopback) adds its request texts to the embedder's count:
      // idle is only meaningful once it is over.
      await during;
      await waitCpuIdle(child.pid);
      how = 'server CPU idle (approximate)';
    }
    const duringResult = await during;
    // The last batch's vectors are written after the embedder answered.
    if (opts.embedder === 'loopback') await sleep(1_000);
    const indexingSeconds = round(registration.seconds + (performance.now() - waitStarted) / 1000, 1);
    log(`all vectors after ${indexingSeconds} s from the first registration`);
    // Stopping the service mid-build would leave an invalid index that the legs' service rebuilds
    // while it is measured (seen at 10,000 tools: every distance computed, the build taking the CPU).
    if (pgUrl && ctx.size >= VECTOR_INDEX_MIN_TOOLS) {
      await waitUntilDone(async () => ((await vectorIndexReady(pgUrl)) ? 0 : 1), 900_000);
      log(`vector index ready after ${round(registration.seconds + (performance.now() - waitStarted) / 1000, 1)} s from the first registration`);
    } else if (!pgUrl && ctx.size >= VECTOR_INDEX_MIN_TOOLS) {
      // Embedded PGlite builds the index on its own thread with no URL to ask: the build is the
      // server's CPU. (In process, the build held the event loop, so the vector count waited for it.)
      await waitCpuIdle(child.pid);
      log(`server idle (vector index built) after ${round(registration.seconds + (performance.now() - waitStarted) / 1000, 1)} s from the first registration`);
    }
    if (!ctx.report.catalogBytes) Object.assign(ctx.report, catalogBaseline(ctx.visibleTools), await shortlistSample(base, ctx.caller));
    const indexThreads = opts.embedder === 'local' ? (opts.indexThreads ?? 'service default') : '-';
    return {
      server: server.label,
      database,
      ...registration,
      indexingSeconds,
      indexedBy: how,
      indexThreads,
      serverPeakRssMiB: round(memoryOf(child.pid).peakMiB, 1),
      ...(duringResult ? { duringIndexing: duringResult } : {}),
    };
  } catch (error) {
    throw new Error(`${(error as Error).message}; server exit ${child.process.exitCode}, end of its output:\n${child.output.slice(-1500)}`, { cause: error });
  } finally {
    await child.stop();
  }
}

/**
 * Node options that write CPU profiles of a server process (--cpu-prof) into a folder named after
 * `what`: one file per thread (main, the loader's and the encoder's), with Node's default names.
 */
function profileArgs(what: string): string[] {
  if (!opts.cpuProf) return [];
  return ['--cpu-prof', `--cpu-prof-dir=${join(resolve(opts.cpuProf), `${what.replace(/\W+/g, '_')}-${Date.now()}`)}`];
}

/** One load leg: a started service on a populated database. */
async function leg(ctx: SizeContext, server: { label: string; root: string }, label: string, env: Record<string, string>, stream: number, database?: Child) {
  const { child, startupMs } = await startService(env, profileArgs(`${ctx.size}-${label}`), server.root);
  log(`${label}: started in ${Math.round(startupMs)} ms`);
  try {
    const { scenarios, authorize } = await loadScenarios(`http://127.0.0.1:${env.PORT}`, ctx.caller, ctx.otherCaller, ctx.visibleTools, stream);
    ctx.report.legs.push({
      driver: label,
      server: server.label,
      startupMs: Math.round(startupMs),
      serverPeakRssMiB: round(memoryOf(child.pid).peakMiB, 1),
      databasePeakRssMiB: database ? round(memoryOf(database.pid).peakMiB, 1) : undefined,
      authorize,
      scenarios,
    });
  } catch (error) {
    throw new Error(`${(error as Error).message}; server exit ${child.process.exitCode}, end of its output:\n${child.output.slice(-1500)}`, { cause: error });
  } finally {
    await child.stop();
  }
}

async function benchSize(size: number, embedder: FakeEmbeddingServer, embeddingUrl: string, postgres: PostgresServer | undefined): Promise<SizeReport> {
  const scopes = catalog.scopes();
  const scopeSet = new Set(scopes);
  const catalogs = await Promise.all(
    Array.from({ length: tenantCount }, async (_, t) => ({
      tenant: tenantId(t),
      token: await mint(tenantId(t), ['registry:publish']),
      tools: catalog.tools(seed, t, t === 0 ? size : catalog.smallSize(t, size)),
    })),
  );
  const visibleTools = catalogs[0]!.tools.filter((t) => visible(t, scopeSet));
  const report: SizeReport = { size, tenants: tenantCount, totalTools: catalogs.reduce((n, c) => n + c.tools.length, 0), visibleTools: visibleTools.length, registrations: [], legs: [], failures: [] };
  const ctx: SizeContext = {
    size,
    catalogs,
    caller: await mint(catalogs[0]!.tenant, scopes),
    otherCaller: await mint(catalogs[1]?.tenant ?? tenantId(1), scopes),
    visibleTools,
    expectedTexts: catalogs.reduce((n, c) => n + c.tools.reduce((m, t) => m + cardTexts(t).length, 0), 0),
    report,
  };
  log(`size ${size}: ${report.totalTools} tools over ${tenantCount} tenants (${visibleTools.length} visible to the caller)`);
  const port = await freePort();
  const env = serviceEnvironment(port, embeddingUrl);

  /** A failed database family is reported and the run goes on (a long run is not lost to one crash). */
  const attempt = async (what: string, work: () => Promise<void>) => {
    try {
      await work();
    } catch (error) {
      const message = `${what}: ${(error as Error).message}`.slice(0, 2_000);
      log(`FAILED ${message}`);
      report.failures.push(message);
    }
  };

  // The same request streams for both checkouts of a driver, so before and after answer the same new requests.
  const STREAMS = { embedded: 10_000_000, socket: 20_000_000, postgres: 30_000_000, indexing: 40_000_000 };
  const tagOf = (server: (typeof servers)[number]) => (server.label ? `${server.label}: ` : '');
  // A database family at a time, both checkouts back to back, the order alternating between
  // families: on this noisy machine whichever leg ran second was slower on stages neither change
  // touched, so always running the baseline first biased every comparison the same way.
  const families: ((server: (typeof servers)[number]) => Promise<void>)[] = [];
  if (drivers.includes('embedded') || drivers.includes('socket')) {
    families.push(async (server) => {
      const tag = tagOf(server);
        await attempt(`${tag}PGlite`, async () => {
          const dataDir = mkdtempSync(join(tmpdir(), `tool-registry-bench-${size}-`));
          try {
            report.registrations.push(await populate(ctx, server, 'embedded PGlite', { ...env, DATA_DIR: dataDir }, embedder, STREAMS.indexing));
            if (drivers.includes('embedded')) await leg(ctx, server, `${tag}embedded PGlite`, { ...env, DATA_DIR: dataDir }, STREAMS.embedded);
            if (!drivers.includes('socket')) return;
            const socket = await startSocketDatabase(dataDir, Number(opts.socketConnections));
            try {
              // The pool must not open more connections than the socket server accepts.
              const socketEnv = { ...env, DATABASE_URL: socket.url, DATABASE_POOL_SIZE: opts.socketConnections };
              await leg(ctx, server, `${tag}PGlite over the wire (pool ${opts.socketConnections})`, socketEnv, STREAMS.socket, socket.child);
            } finally {
              await socket.child.stop();
            }
          } finally {
            rmSync(dataDir, { recursive: true, force: true });
          }
        });
    });
  }
  if (drivers.includes('postgres') && postgres) {
    const pg = postgres;
    families.push(async (server) => {
      const tag = tagOf(server);
        await attempt(`${tag}native PostgreSQL`, async () => {
          const name = `bench_${size}_${server.label || 'run'}_${process.pid}`;
          const url = await freshDatabase(pg, name);
          try {
            const pgEnv = { ...env, DATABASE_URL: url, ...(opts.poolSize ? { DATABASE_POOL_SIZE: opts.poolSize } : {}) };
            report.registrations.push(await populate(ctx, server, 'native PostgreSQL', pgEnv, embedder, STREAMS.indexing, url));
            // The embedded legs get the same from the service's own table maintenance at start-up.
            await vacuumAnalyze(url);
            await leg(ctx, server, `${tag}native PostgreSQL`, pgEnv, STREAMS.postgres);
          } finally {
            if (opts.keepDatabase) log(`kept ${databaseUrl(pg.url, name).replace(/\/\/[^@]*@/, '//')}`);
            else await dropDatabase(pg, name);
          }
        });
    });
  }
  for (const [i, family] of families.entries()) {
    for (const server of i % 2 === 0 ? servers : [...servers].reverse()) await family(server);
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
  cpus: cpus().length,
  seconds,
  catalog: opts.catalog,
  servers: servers.map((s) => `${s.label || 'service'}: ${s.root}`),
  embedder:
    opts.embedder === 'local'
      ? `the real local encoder (use-lite-512) in the service, for tool vectors and new request texts; indexing threads (EMBEDDING_LOCAL_THREADS): ${opts.indexThreads ?? 'service default'}`
      : 'loopback OpenAI-compatible hashing embedder (512-d) for tool vectors and new request texts; see localModel for the real encoder',
  sizes: [],
};
let postgres: PostgresServer | undefined;
try {
  if (opts.localModel) {
    const sample = catalog.tools(seed, 0, 256).flatMap(cardTexts);
    report.localModel = await localModelCost(sample);
    log(`local encoder: request text p50 ${report.localModel.p50} ms p95 ${report.localModel.p95} ms; card texts ${report.localModel.textsPerSecond}/s`);
  }
  if (drivers.includes('postgres')) {
    postgres = await startPostgres(process.env.DATABASE_URL);
    log(`native PostgreSQL at ${postgres.url.replace(/\/\/[^@]*@/, '//')}`);
  }
  for (const size of sizes) report.sizes.push(await benchSize(size, embedder, embeddingUrl, postgres));
} finally {
  await postgres?.stop();
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
