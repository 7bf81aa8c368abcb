/**
 * Added latency of a call through the registry's gateway over a direct call to the same upstream,
 * in one run: server-everything (streamable HTTP, a child process) serves `get-sum`; the registry
 * (in-memory PGlite, listening on loopback, no embedder) has it registered as an upstream. Three
 * ways to call the same tool, each at concurrency 1 and 16, p50/p99 in milliseconds:
 *   direct     the MCP SDK client on one session to the upstream (what the gateway itself does)
 *   /v1/call   HTTP POST with the caller's token (authorize decision + audit + tools/call)
 *   call_tool  the MCP SDK client on the registry's /mcp (stateless: a server per request)
 *
 *   npx tsx scripts/gateway-latency.ts        # GATEWAY_CALLS=400 per measurement by default
 */
import type { AddressInfo } from 'node:net';

import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { buildApp } from '../src/app.js';
import { createVerifier } from '../src/auth/verifier.js';
import { loadConfig } from '../src/config.js';
import { fromPglite } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { startEverything } from '../test/helpers/mcp-upstreams.js';
import { PUBLISH, TEST_SECRET, token } from '../test/helpers/tokens.js';

const CALLS = Number(process.env.GATEWAY_CALLS ?? 400);
const WARMUP = 40;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Runs `calls` calls of `once` with `concurrency` in flight; per-call latencies in ms, sorted. */
async function measure(once: () => Promise<void>, calls: number, concurrency: number): Promise<number[]> {
  for (let i = 0; i < WARMUP; i += 1) await once();
  const latencies: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < calls) {
        next += 1;
        const started = performance.now();
        await once();
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies.sort((a, b) => a - b);
}

async function mcpClient(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'gateway-latency', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
}

const everything = await startEverything();
const pglite = await PGlite.create({ extensions: { vector } });
const database = fromPglite(pglite);
await migrate(database);
const config = loadConfig({
  JWT_SECRET: TEST_SECRET,
  EMBEDDING_PROVIDER: 'none',
  LOG_LEVEL: 'silent',
  DATA_DIR: 'memory://',
  UPSTREAM_ALLOWED_URLS: new URL(everything.url).origin,
  UPSTREAM_SYNC_INTERVAL_MS: '0',
  RATE_LIMIT_AUTHORIZE_PER_MINUTE: '0',
  RATE_LIMIT_MCP_PER_MINUTE: '0',
});
const app = await buildApp({ config, database, ownsDatabase: true, verify: createVerifier(config.jwt) });
await app.listen({ host: '127.0.0.1', port: 0 });
const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
try {
  const publisher = await token({ tenant: 'bench', scopes: [PUBLISH] });
  const agent = await token({ tenant: 'bench', scopes: ['demo:use'], exp: '2h' });
  const registered = await fetch(`${base}/v1/upstreams`, {
    method: 'POST',
    headers: { authorization: `Bearer ${publisher}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'everything', url: everything.url, required_scopes: ['demo:use'] }),
  });
  if (registered.status !== 201) throw new Error(`registration failed: ${registered.status} ${await registered.text()}`);

  const direct = await mcpClient(everything.url);
  const viaMcp = await mcpClient(`${base}/mcp`, { authorization: `Bearer ${agent}` });
  const args = { a: 17, b: 25 };
  const ways: Record<string, () => Promise<void>> = {
    direct: async () => {
      await direct.callTool({ name: 'get-sum', arguments: args });
    },
    '/v1/call': async () => {
      const response = await fetch(`${base}/v1/call`, {
        method: 'POST',
        headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' },
        body: JSON.stringify({ tool: 'everything_get-sum', arguments: args }),
      });
      if (response.status !== 200) throw new Error(`/v1/call answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
    },
    call_tool: async () => {
      const result = await viaMcp.callTool({ name: 'call_tool', arguments: { name: 'everything_get-sum', arguments: args } });
      if (result.isError) throw new Error(`call_tool failed: ${JSON.stringify(result.content)}`);
    },
  };
  const rows: string[] = ['| way | concurrency | calls | p50 ms | p99 ms |', '|---|---|---|---|---|'];
  for (const concurrency of [1, 16]) {
    for (const [name, once] of Object.entries(ways)) {
      const latencies = await measure(once, CALLS, concurrency);
      rows.push(`| ${name} | ${concurrency} | ${latencies.length} | ${percentile(latencies, 50).toFixed(2)} | ${percentile(latencies, 99).toFixed(2)} |`);
    }
  }
  process.stdout.write(`${rows.join('\n')}\n`);
  await direct.close();
  await viaMcp.close();
} finally {
  await app.close();
  await everything.stop();
}
