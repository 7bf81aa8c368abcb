// scratch: populate a PGlite DATA_DIR in-process (tenant 0 = size, others 1%), with fake vectors.
import { buildApp } from '../../src/app.js';
import { createVerifier } from '../../src/auth/verifier.js';
import { loadConfig } from '../../src/config.js';
import { openPglite } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import type { Embedder } from '../../src/embedding/provider.js';
import { SignJWT } from 'jose';
import { generateTools } from './catalog.js';
import { FakeEmbeddingServer } from './fake-embedder.js';

const [dir, sizeArg] = process.argv.slice(2);
const size = Number(sizeArg);
const secret = 'scratch-secret-0123456789abcdef-0123456789abcdef';
class Fake implements Embedder { readonly model = 'openai:bench-hash-512'; async embed(t: string[]) { return t.map(FakeEmbeddingServer.vector); } }
const config = loadConfig({ DATA_DIR: dir, JWT_SECRET: secret, LOG_LEVEL: 'silent', EMBEDDING_PROVIDER: 'none' });
const database = await openPglite(dir!);
await migrate(database);
const app = await buildApp({ config, database, ownsDatabase: true, verify: createVerifier(config.jwt), embedder: new Fake() });
await app.ready();
const t0 = performance.now();
for (let t = 0; t < 20; t++) {
  const tenant = `bench-t${String(t).padStart(2, '0')}`;
  const token = await new SignJWT({ tenant_id: tenant, scope: 'registry:publish' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('1h').sign(new TextEncoder().encode(secret));
  const tools = generateTools(42, t, t === 0 ? size : Math.max(50, Math.round(size / 100)));
  let i = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (i < tools.length) {
      const tool = tools[i++]!;
      const r = await app.inject({ method: 'POST', url: '/v1/tools', headers: { authorization: `Bearer ${token}` }, payload: tool });
      if (r.statusCode !== 201) throw new Error(r.body);
    }
  }));
  console.log(tenant, tools.length, Math.round(performance.now() - t0), 'ms');
}
await app.indexer?.flush();
console.log('done', Math.round(performance.now() - t0), 'ms');
await app.close();
