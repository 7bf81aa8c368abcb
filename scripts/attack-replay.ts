/**
 * Replays issue 32's event-loop attacks against the real HTTP server on embedded PGlite and prints
 * latencies: authorize with `^.*.*.*.*x$` on a 10,000-character argument, and a ~232 KB dry-run
 * schema full of patterns, each with the worst /healthz latency polled every 10 ms meanwhile.
 * Usage: npx tsx scripts/attack-replay.ts
 */
import type { AddressInfo } from 'node:net';

import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';

import { buildApp } from '../src/app.js';
import { createVerifier } from '../src/auth/verifier.js';
import { loadConfig } from '../src/config.js';
import { fromPglite } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { toolDocument } from '../test/helpers/fixtures.js';
import { PUBLISH, TEST_SECRET, token } from '../test/helpers/tokens.js';

const pglite = await PGlite.create({ extensions: { vector } });
const database = fromPglite(pglite);
await migrate(database);
const config = loadConfig({ JWT_SECRET: TEST_SECRET, EMBEDDING_PROVIDER: 'none', LOG_LEVEL: 'silent' });
const app = await buildApp({ config, database, ownsDatabase: true, verify: createVerifier(config.jwt) });
await app.listen({ host: '127.0.0.1', port: 0 });
const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
const publisher = await token({ tenant: 'attack-replay', scopes: [PUBLISH] });

/** Sends one request while /healthz is polled every 10 ms; returns its latency, status and the worst /healthz latency. */
async function timed(method: string, path: string, body: unknown): Promise<{ ms: number; status: number; worstHealthzMs: number }> {
  let worst = 0;
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const started = performance.now();
      await fetch(`${base}/healthz`);
      worst = Math.max(worst, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  await new Promise((resolve) => setTimeout(resolve, 30));
  const started = performance.now();
  const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${publisher}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await res.text();
  const ms = performance.now() - started;
  polling = false;
  await poller;
  return { ms: Math.round(ms * 10) / 10, status: res.status, worstHealthzMs: Math.round(worst * 10) / 10 };
}

const parameters = { type: 'object', properties: { code: { type: 'string', pattern: '^.*.*.*.*x$', description: 'a code' } } };
const published = await fetch(`${base}/v1/tools`, { method: 'POST', headers: { authorization: `Bearer ${publisher}`, 'content-type': 'application/json' }, body: JSON.stringify(toolDocument({ name: 'redos', parameters })) });
if (published.status !== 201) throw new Error(`publish failed: ${published.status} ${await published.text()}`);
const authorize = await timed('POST', '/v1/authorize', { tool: 'redos', arguments: { code: 'a'.repeat(10_000) } });

// ~232 KB: 450 properties, each with a 500-character pattern.
const properties = Object.fromEntries(Array.from({ length: 450 }, (_, i) => [`p${i}`, { type: 'string', pattern: `^(?:a|b)*${'x'.repeat(480)}${i}$` }]));
const big = toolDocument({ name: 'big_schema', parameters: { type: 'object', properties } });
const dryRun = await timed('POST', '/v1/tools?dry_run=true', big);

// eslint-disable-next-line no-console -- the script prints its figures
console.log(JSON.stringify({ authorize10k: authorize, dryRun232k: { ...dryRun, bytes: JSON.stringify(big).length } }, null, 2));
await app.close();
