/**
 * Soak: a bounded mixed load (register, update, discover, authorize) against the app listening on
 * loopback, on an in-memory PGlite database. Fails on any error response, on heap growth beyond
 * the bound, or when a fixed query set ranks differently after the load than before it.
 *
 *   npm run soak                    # 5 minutes (SOAK_SECONDS to change), heap measured after GC
 *   test/reliability/soak.test.ts   # the same driver for ~20 s in CI
 */
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';

import { buildApp } from '../src/app.js';
import { createVerifier } from '../src/auth/verifier.js';
import { loadConfig } from '../src/config.js';
import { fromPglite } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { toolDocument } from '../test/helpers/fixtures.js';
import { PUBLISH, TEST_SECRET, token } from '../test/helpers/tokens.js';

export interface SoakOptions {
  durationMs: number;
  /** Requests in flight at once. */
  concurrency: number;
  /** Allowed heap growth between the warm-up and the end (bytes). */
  heapBoundBytes: number;
}

export interface SoakReport {
  requests: number;
  byKind: Record<string, number>;
  errors: string[];
  heapGrowthBytes: number;
  heapBoundBytes: number;
  /** The fixed query set's shortlists (name@version:score) before and after the load. */
  before: string[][];
  after: string[][];
}

const WORDS = ['refund', 'invoice', 'shipment', 'ticket', 'deploy', 'server', 'customer', 'order', 'report', 'backup', 'user', 'password'];
const FIXED_QUERIES = ['refund a paid invoice', 'track my shipment', 'restart the server', 'reset a user password', 'issue_refund', 'backup report'];

/**
 * A full collection before every heap reading: without one, heapUsed swings by 100+ MiB with
 * garbage not yet collected (the short form under vitest flaked on that). `--expose-gc` when the
 * process has it, else the same function enabled at run time.
 */
function collector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
const gc = collector();
const heapUsed = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

/** Runs the soak and returns what it saw; the caller decides pass or fail (see `soakProblems`). */
export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const pglite = await PGlite.create({ extensions: { vector } });
  const database = fromPglite(pglite);
  await migrate(database);
  const config = loadConfig({ JWT_SECRET: TEST_SECRET, EMBEDDING_PROVIDER: 'none', LOG_LEVEL: 'silent', RATE_LIMIT_DISCOVER_PER_MINUTE: '0', RATE_LIMIT_AUTHORIZE_PER_MINUTE: '0', RATE_LIMIT_PUBLISH_PER_MINUTE: '0' });
  const app = await buildApp({ config, database, ownsDatabase: true, verify: createVerifier(config.jwt) });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  try {
    const fixedPublisher = await token({ tenant: 'soak-fixed', scopes: [PUBLISH], exp: '2h' });
    const fixedReader = await token({ tenant: 'soak-fixed', scopes: ['ops:admin'], exp: '2h' });
    const publisher = await token({ tenant: 'soak-load', scopes: [PUBLISH, 'ops:admin'], exp: '2h' });
    const request = async (method: string, path: string, tokenValue: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${tokenValue}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const doc = (name: string, i: number, version = '1.0.0') =>
      toolDocument({
        name,
        version,
        description: `${WORDS[i % WORDS.length]} ${WORDS[(i * 7 + 3) % WORDS.length]} tool ${name}, revision ${version}.`,
        aliases: [`${WORDS[(i * 5 + 1) % WORDS.length]} ${WORDS[(i * 3 + 2) % WORDS.length]}`],
        required_scopes: i % 4 === 0 ? ['ops:admin'] : [],
      });
    for (let i = 0; i < 40; i += 1) {
      const res = await request('POST', '/v1/tools', fixedPublisher, doc(`fixed_${i}`, i));
      if (res.status !== 201) throw new Error(`seeding failed: ${res.status} ${JSON.stringify(res.body)}`);
    }
    const fixedSet = async () => {
      const lists: string[][] = [];
      for (const query of FIXED_QUERIES) {
        const res = await request('POST', '/v1/discover', fixedReader, { query, top_k: 5 });
        lists.push(((res.body.tools ?? []) as { name: string; version: string; score: number }[]).map((t) => `${t.name}@${t.version}:${t.score.toFixed(6)}`));
      }
      return lists;
    };
    const before = await fixedSet();

    const errors: string[] = [];
    const byKind: Record<string, number> = {};
    let requests = 0;
    let registered = 0;
    const versions = new Map<string, number>();
    const operations: Record<string, (i: number) => Promise<boolean>> = {
      register: async (i) => {
        const name = `load_${registered++}`;
        const res = await request('POST', '/v1/tools', publisher, doc(name, i));
        if (res.status === 201) versions.set(name, 0);
        return res.status === 201;
      },
      update: async (i) => {
        const names = [...versions.keys()];
        if (names.length === 0) return true;
        const name = names[i % names.length]!;
        const minor = (versions.get(name) ?? 0) + 1;
        versions.set(name, minor);
        const res = await request('PUT', `/v1/tools/${name}`, publisher, doc(name, i, `1.${minor}.0`));
        // Two workers may race on one name: a lower version arriving second is a correct 409.
        return res.status === 200 || res.status === 409;
      },
      discover: async (i) => {
        const query = `${WORDS[i % WORDS.length]} ${WORDS[(i * 3) % WORDS.length]}`;
        const [a, b] = await Promise.all([
          request('POST', '/v1/discover', fixedReader, { query, top_k: 3 }),
          request('POST', '/v1/discover', publisher, { query, top_k: 5, format: 'anthropic' }),
        ]);
        return a.status === 200 && b.status === 200;
      },
      authorize: async (i) => {
        const names = [...versions.keys()];
        const tool = names.length > 0 ? names[i % names.length]! : 'nothing_yet';
        const res = await request('POST', '/v1/authorize', publisher, { tool, arguments: { invoice_id: `inv-${i}` } });
        return res.status === 200;
      },
    };
    // Mostly reads, as in production: per 10 operations 1 register, 2 updates, 4 discovers, 3 authorizes.
    const mix = ['register', 'update', 'update', 'discover', 'discover', 'discover', 'discover', 'authorize', 'authorize', 'authorize'];
    const warmupEnds = Date.now() + Math.min(5_000, options.durationMs / 5);
    const ends = Date.now() + options.durationMs;
    let heapAtWarmup: number | undefined;
    let counter = 0;
    const worker = async () => {
      while (Date.now() < ends && errors.length < 20) {
        const i = counter++;
        const kind = mix[i % mix.length]!;
        try {
          if (!(await operations[kind]!(i))) errors.push(`${kind} #${i} failed`);
        } catch (error) {
          errors.push(`${kind} #${i}: ${(error as Error).message}`);
        }
        requests += kind === 'discover' ? 2 : 1;
        byKind[kind] = (byKind[kind] ?? 0) + 1;
        if (heapAtWarmup === undefined && Date.now() > warmupEnds) heapAtWarmup = heapUsed();
      }
    };
    await Promise.all(Array.from({ length: options.concurrency }, worker));
    const heapGrowthBytes = heapUsed() - (heapAtWarmup ?? heapUsed());
    const after = await fixedSet();
    return { requests, byKind, errors, heapGrowthBytes, heapBoundBytes: options.heapBoundBytes, before, after };
  } finally {
    await app.close();
  }
}

/** Everything wrong with a soak run (empty: passed). */
export function soakProblems(report: SoakReport): string[] {
  const problems = [...report.errors];
  if (report.heapGrowthBytes > report.heapBoundBytes) {
    problems.push(`heap grew ${(report.heapGrowthBytes / 2 ** 20).toFixed(1)} MiB, bound ${(report.heapBoundBytes / 2 ** 20).toFixed(0)} MiB`);
  }
  if (JSON.stringify(report.before) !== JSON.stringify(report.after)) problems.push('the fixed query set ranks differently after the load');
  if (report.before.every((list) => list.length === 0)) problems.push('the fixed query set found nothing: the check proves nothing');
  return problems;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  /* eslint-disable no-console -- the soak command prints its report */
  const seconds = Number(process.env.SOAK_SECONDS ?? 300);
  const report = await runSoak({ durationMs: seconds * 1000, concurrency: 8, heapBoundBytes: 64 * 2 ** 20 });
  const problems = soakProblems(report);
  console.log(
    JSON.stringify({ seconds, requests: report.requests, byKind: report.byKind, heapGrowthMiB: +(report.heapGrowthBytes / 2 ** 20).toFixed(1), problems }, null, 2),
  );
  process.exit(problems.length === 0 ? 0 : 1);
}
