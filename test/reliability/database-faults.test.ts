import type { PGlite } from '@electric-sql/pglite';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Database, openPostgres } from '../../src/db/client.js';
import { servePgliteOverWire } from '../../src/db/pglite-wire.mjs';
import { buildTestApp, call } from '../helpers/app.js';
import { clonePglite } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { expectCleanError } from '../security/helpers.js';

/**
 * The database going away under a running app (external-database mode: PGlite served over the wire
 * through pglite-socket, reached with pg). Stopping the socket server is the outage; a new server
 * on the same PGlite instance and port is the database coming back. No app restart in between.
 */
describe('database outage on the wire (pglite-socket + pg)', () => {
  let pglite: PGlite;
  let server: PGLiteSocketServer;
  let port = 0;
  let database: Database;
  let app: FastifyInstance;
  const tenant = uniqueTenant('outage');

  const start = async () => {
    server = servePgliteOverWire(pglite, { host: '127.0.0.1', port, maxConnections: 8 });
    await server.start();
    port = Number(server.getServerConn().split(':').at(-1));
  };

  beforeAll(async () => {
    pglite = await clonePglite();
    await start();
    database = await openPostgres(`postgres://postgres:postgres@127.0.0.1:${port}/postgres`, 4);
    app = await buildTestApp({ database });
  });
  afterAll(async () => {
    await app?.close();
    await database?.close().catch(() => undefined);
    await server?.stop().catch(() => undefined);
    await pglite?.close();
  });

  it('answers 503 with Retry-After and turns readiness false while the database is away, then recovers', async () => {
    const publisher = await token({ tenant, scopes: [PUBLISH] });
    expect((await call(app, 'POST', '/v1/tools', { token: publisher, body: toolDocument() })).statusCode).toBe(201);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);

    // An in-flight request racing the outage, then requests during it.
    const inFlight = call(app, 'POST', '/v1/discover', { token: publisher, body: { query: 'refund an invoice' } });
    await server.stop();
    const raced = await inFlight;
    expect([200, 503]).toContain(raced.statusCode);

    const requests = [
      () => call(app, 'GET', '/v1/tools', { token: publisher }),
      () => call(app, 'GET', '/v1/tools/issue_refund', { token: publisher }),
      () => call(app, 'POST', '/v1/discover', { token: publisher, body: { query: 'refund an invoice' } }),
      () => call(app, 'POST', '/v1/authorize', { token: publisher, body: { tool: 'issue_refund', arguments: { invoice_id: 'x' } } }),
      () => call(app, 'PUT', '/v1/tools/issue_refund', { token: publisher, body: toolDocument({ version: '2.0.0' }) }),
    ];
    for (const request of requests) {
      const res = await request();
      expectCleanError(res, 503);
      expect(res.json().error.code).toBe('unavailable');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ status: 'not_ready', checks: { database: 'unreachable' } });
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

    await start();
    // The pool drops broken connections and reconnects on demand: no restart of the app.
    let recovered = await call(app, 'GET', '/v1/tools', { token: publisher });
    for (let attempt = 0; recovered.statusCode !== 200 && attempt < 20; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      recovered = await call(app, 'GET', '/v1/tools', { token: publisher });
    }
    expect(recovered.statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    const put = await call(app, 'PUT', '/v1/tools/issue_refund', { token: publisher, body: toolDocument({ version: '2.0.0' }) });
    expect(put.statusCode).toBe(200);
    expect(put.json().revision).toBe(2);
    const discovered = await call(app, 'POST', '/v1/discover', { token: publisher, body: { query: 'refund an invoice' } });
    expect(discovered.json().tools[0].version).toBe('2.0.0');
  });
});
