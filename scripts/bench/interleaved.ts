/**
 * Interleaved A/B of discovery, new requests or cached ones, or of authorization (`--scenario`): the services of several checkouts, started side by
 * side on one database the bench kept (`npm run bench -- ... --keep-database`, every vector
 * already stored), loaded one after the other in rounds whose order rotates, so the machine's
 * drift falls on every checkout alike. Prints each run (p50/p99, req/s, errors, mean ms per stage
 * from the service's histograms) and the median per checkout and concurrency.
 *
 * Usage: npx tsx scripts/bench/interleaved.ts --database <url of the kept bench database>
 *   [--rounds 6] [--seconds 5] [--concurrency 1,32] [--threads 1] [--scenario new|cached|authorize] label=<checkout dir> ...
 * Each checkout needs its node_modules. The services use the local encoder (the bench's tool
 * vectors must be of the local model: a bench run with `--embedder local`, or a service left to
 * index the kept database first); they log in as the bench's caller of its first tenant.
 * `authorize` asks for 50 of that caller's tools in turn, each with arguments valid for its schema.
 */
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { benchToken, drive } from './load.js';
import { type Child, freePort, startService } from './processes.js';
import { realCallerScopes, realRequestText, valueFor } from './real-catalog.js';
import { stageSplit } from './stages.js';

/* eslint-disable no-console -- a script's output is its interface */

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    database: { type: 'string' },
    rounds: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '1,32' },
    threads: { type: 'string', default: '1' },
    scenario: { type: 'string', default: 'new' },
  },
});
if (!['new', 'cached', 'authorize'].includes(values.scenario)) throw new Error(`--scenario is new, cached or authorize, not ${values.scenario}`);
if (!values.database || positionals.length < 2) throw new Error('usage: --database <url> label=<checkout> label=<checkout> ...');
const seconds = Number(values.seconds);
const concurrencies = values.concurrency.split(',').map(Number);
const secret = randomBytes(32).toString('base64url');
// The bench's caller: its first tenant, the real catalog's scopes.
const token = await benchToken(secret, 'interleaved', 'bench-t00', realCallerScopes());

interface Service {
  label: string;
  base: string;
  child: Child;
}
const services: Service[] = [];
for (const spec of positionals) {
  const [label, root] = spec.split('=') as [string, string | undefined];
  if (!root) throw new Error(`expected label=<checkout dir>, got ${spec}`);
  const port = await freePort();
  const env = {
    DATABASE_URL: values.database,
    PORT: String(port),
    JWT_SECRET: secret,
    EMBEDDING_PROVIDER: 'local',
    EMBEDDING_LOCAL_THREADS: values.threads,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_DISCOVER_PER_MINUTE: '0',
    RATE_LIMIT_AUTHORIZE_PER_MINUTE: '0',
  };
  const { child } = await startService(env, [], resolve(root));
  services.push({ label, base: `http://127.0.0.1:${port}`, child });
}

const body = (query: string) => ({ query, top_k: 3, format: 'openai' });
const get = async (path: string): Promise<unknown> => (await fetch(`${services[0]!.base}${path}`, { headers: { authorization: `Bearer ${token}` } })).json();
// authorize: 50 of the caller's tools, each with arguments its schema accepts (the database is shared).
const calls: { tool: string; arguments: unknown }[] = [];
if (values.scenario === 'authorize') {
  const { tools } = (await get('/v1/tools?limit=50')) as { tools: { name: string }[] };
  for (const { name } of tools) calls.push({ tool: name, arguments: valueFor(((await get(`/v1/tools/${name}`)) as { parameters: Parameters<typeof valueFor>[0] }).parameters) });
}
const path = values.scenario === 'authorize' ? '/v1/authorize' : '/v1/discover';
const metrics = async (service: Service): Promise<string> => (await fetch(`${service.base}/metrics`)).text();
// new: every request text is new to every service, so its query and shortlist caches never hit.
// cached: 50 texts, each asked once per service before the rounds, then served from its caches.
const REPEATED = 50;
let stream = 0;
const texts = (): ((i: number) => unknown) => {
  if (values.scenario === 'authorize') return (i) => calls[i % calls.length];
  const offset = values.scenario === 'cached' ? 0 : ++stream * 100_000;
  return (i: number) => body(realRequestText(7, offset + (values.scenario === 'cached' ? i % REPEATED : i)));
};
for (const service of services) {
  if (values.scenario === 'cached') {
    const ask = texts();
    for (let i = 0; i < REPEATED; i++) {
      const response = await fetch(`${service.base}/v1/discover`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(ask(i)) });
      await response.arrayBuffer();
    }
  }
  await drive({ url: service.base, path, token, connections: 4, seconds: 3, body: texts() });
}

const runs = new Map<string, { p50: number[]; rps: number[]; errors: number }>();
for (let round = 0; round < Number(values.rounds); round++) {
  const shift = round % services.length;
  for (const service of [...services.slice(shift), ...services.slice(0, shift)]) {
    for (const connections of concurrencies) {
      const before = await metrics(service);
      const result = await drive({ url: service.base, path, token, connections, seconds, body: texts() });
      const stages = Object.entries(stageSplit(before, await metrics(service)).mean).map(([stage, ms]) => `${stage} ${Number(ms).toFixed(0)}`);
      const key = `${service.label} c=${connections}`;
      const run = runs.get(key) ?? { p50: [], rps: [], errors: 0 };
      run.p50.push(result.p50);
      run.rps.push(result.rps);
      run.errors += result.non2xx + result.errors;
      runs.set(key, run);
      console.log(`round ${round} ${key}: p50 ${result.p50} ms p99 ${result.p99} ms ${result.rps} req/s errors ${result.non2xx + result.errors}; mean ms ${stages.join(', ')}`);
    }
  }
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
for (const [key, run] of runs) console.log(`${key}: median p50 ${median(run.p50)} ms, median ${median(run.rps)} req/s, errors ${run.errors}`);
for (const service of services) service.child.process.kill('SIGTERM');
