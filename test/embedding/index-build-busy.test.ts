import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildApp } from '../../src/app.js';
import type { Database } from '../../src/db/client.js';
import { call, testConfig, testDependencies } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

/**
 * While the model's HNSW index is built. On PGlite (in process or over the wire) the build holds
 * the one database connection (14 s for 3,500 real-shaped tools): readiness says so at once and the API
 * answers 503 with Retry-After instead of queueing behind it. On PostgreSQL the build is
 * concurrent: everything keeps serving and readiness reports it as degraded. The build is held at
 * its start (its session is granted only on release), so what is seen is the service's own
 * account of the build, not a slow database.
 */
forEachDatabase((db) => {
  describe('an HNSW index build in progress', () => {
    let app: FastifyInstance;
    let release!: () => void;
    let started!: Promise<void>;
    const tenant = uniqueTenant('busy');

    beforeAll(async () => {
      const released = new Promise<void>((resolve) => (release = resolve));
      let entered!: () => void;
      started = new Promise<void>((resolve) => (entered = resolve));
      const database: Database = db.database;
      const held: Database = {
        ...database,
        withSession: async (fn) => {
          entered();
          await released;
          return database.withSession(fn);
        },
      };
      app = await buildApp({ ...testDependencies(testConfig({ VECTOR_INDEX_MIN_TOOLS: '2', DISCOVERY_CACHE_MB: '0' }), held), embedder: new HashingEmbedder() });
      await app.ready();
    });
    afterAll(async () => {
      release();
      await app.close();
    });

    it('is reported by readiness, and on PGlite the API refuses with 503 and Retry-After until it ends', async () => {
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      for (const name of ['export_invoice', 'archive_ticket']) {
        expect((await call(app, 'POST', '/v1/tools', { token: publisher, body: toolDocument({ name }) })).statusCode).toBe(201);
      }
      await started;
      const caller = await token({ tenant, scopes: [] });
      const discover = () => call(app, 'POST', '/v1/discover', { token: caller, body: { query: 'export the invoice' } });
      const ready = await call(app, 'GET', '/readyz');
      expect((await call(app, 'GET', '/healthz')).statusCode).toBe(200);

      if (db.database.concurrentIndexBuild) {
        expect(ready.statusCode).toBe(200);
        expect(ready.json().checks).toMatchObject({ database: 'ok', vector_index: expect.stringMatching(/^degraded: building concurrently/) });
        expect((await discover()).statusCode).toBe(200);
      } else {
        expect(ready.statusCode).toBe(503);
        expect(ready.json()).toMatchObject({
          status: 'not_ready',
          checks: { database: expect.stringMatching(/^busy: building the vector index \(embedded database/), vector_index: expect.stringMatching(/^building/) },
        });
        for (const refused of [await discover(), await call(app, 'POST', '/mcp', { token: caller, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } })]) {
          expect(refused.statusCode).toBe(503);
          expect(refused.headers['retry-after']).toBe('5');
          expect(refused.json().error).toMatchObject({ code: 'unavailable', message: expect.stringContaining('building the vector index') });
        }
      }

      release();
      await app.indexer!.flush();
      const after = await call(app, 'GET', '/readyz');
      expect(after.statusCode).toBe(200);
      expect(after.json().checks).toMatchObject({ database: 'ok', vector_index: 'ok' });
      const res = await discover();
      expect(res.statusCode).toBe(200);
      expect(res.json().tools[0].name).toBe('export_invoice');
    }, 60_000);
  });
});
