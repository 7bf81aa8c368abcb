/**
 * Server CPU spent by learning (issue 13, finding 4), in-process with the real encoder on an
 * in-memory PGlite: `npx tsx scripts/learning-cpu.ts [rounds]`. Each round, one caller discovers a
 * long query (~3,000 characters, new each round) and calls a tool twice citing it; then the
 * indexer catches up. Prints the CPU time of the rounds plus indexing, and of the same rounds
 * without `discovery_id` (no learning), and how many texts the indexer embedded.
 */
import { SignJWT } from 'jose';

import { buildApp } from '../src/app.js';
import { createVerifier } from '../src/auth/verifier.js';
import { loadConfig } from '../src/config.js';
import { openPglite } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { LocalEmbedder } from '../src/embedding/local.js';
import type { Embedder } from '../src/embedding/provider.js';

const rounds = Number(process.argv[2] ?? 15);
const secret = 'learning-cpu-secret-0123456789abcdef';
const config = loadConfig({ JWT_SECRET: secret, EMBEDDING_PROVIDER: 'local', LOG_LEVEL: 'silent', RATE_LIMIT_DISCOVER_PER_MINUTE: '0', RATE_LIMIT_AUTHORIZE_PER_MINUTE: '0', RATE_LIMIT_PUBLISH_PER_MINUTE: '0' });
const database = await openPglite('memory://');
await migrate(database);
const local = await LocalEmbedder.load();
let embeddedTexts = 0;
const embedder: Embedder = { model: local.model, embed: (texts) => ((embeddedTexts += texts.length), local.embed(texts)) };
const app = await buildApp({ config, database, ownsDatabase: true, verify: createVerifier(config.jwt), embedder });
await app.ready();
const sign = (scope: string, sub: string) =>
  new SignJWT({ tenant_id: 'cpu', scope }).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setExpirationTime('1h').sign(new TextEncoder().encode(secret));
const publisher = await sign('registry:publish', 'pub');
const caller = await sign('', 'user-1');
const inject = (method: 'POST', url: string, token: string, body: unknown) =>
  app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, payload: body as Record<string, unknown> });

const words = 'account balance invoice payment vendor ledger report customer order shipment refund password flight weather'.split(' ');
const tool = (name: string, description: string) => ({
  name,
  version: '1.0.0',
  description,
  aliases: Array.from({ length: 8 }, (_, i) => `${name.replace(/_/g, ' ')} alias ${i} ${words[i]}`),
  examples: Array.from({ length: 8 }, (_, i) => `please ${name.replace(/_/g, ' ')} for ${words[(i + 3) % words.length]} number ${i}`),
  sensitivity: 'low',
  parameters: { type: 'object', properties: {} },
});
for (const [name, description] of [['lookup_fx_rate', 'Currency conversion rates.'], ['get_weather', 'Weather forecast for a city.'], ['book_flight', 'Book a flight.']]) {
  const res = await inject('POST', '/v1/tools', publisher, tool(name!, description!));
  if (res.statusCode !== 201) throw new Error(res.body);
}
await app.indexer?.flush();

const longQuery = (round: number, tag: string) =>
  Array.from({ length: 330 }, (_, i) => words[(i * 7 + round) % words.length]).join(' ').slice(0, 2990) + ` ${tag}${round}`;

async function run(learn: boolean): Promise<{ cpuMs: number; texts: number }> {
  embeddedTexts = 0;
  const before = process.cpuUsage();
  for (let round = 0; round < rounds; round += 1) {
    const offered = (await inject('POST', '/v1/discover', caller, { query: longQuery(round, learn ? 'l' : 'n'), top_k: 1 })).json<{ discovery_id: string; tools: { name: string }[] }>();
    const target = ['lookup_fx_rate', 'get_weather', 'book_flight'].find((n) => !offered.tools.some((t) => t.name === n))!;
    for (let i = 0; i < 2; i += 1) await inject('POST', '/v1/authorize', caller, { tool: target, arguments: {}, ...(learn ? { discovery_id: offered.discovery_id } : {}) });
  }
  await app.indexer?.flush();
  const used = process.cpuUsage(before);
  return { cpuMs: Math.round((used.user + used.system) / 1000), texts: embeddedTexts };
}

const without = await run(false);
const withLearning = await run(true);
process.stdout.write(
  `learning CPU, ${rounds} rounds of a ~3,000-character query + 2 authorizes:\n` +
    `  without discovery_id: ${without.cpuMs} ms CPU, ${without.texts} texts embedded (queries included)\n` +
    `  citing discovery_id:  ${withLearning.cpuMs} ms CPU, ${withLearning.texts} texts embedded (queries included)\n`,
);
await app.close();
