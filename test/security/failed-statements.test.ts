import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Database, openEmbedded } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { buildTestApp, call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { rawJson } from './helpers.js';

/**
 * Issue 32, finding 3: on the embedded database, a request that failed inside the database cost
 * its pool connection (pg-pool closes a client released with the statement's error), and the
 * socket server, which serves exactly the pool's size, refused the replacement ("too many
 * connections"): another tenant's requests got 503. Replayed on the embedded database as the
 * service opens it (PGlite on its thread behind the socket server) and on every test leg.
 */

/** Another tenant's good requests while one caller loops requests that fail (before: inside the database). */
async function replay(app: FastifyInstance, rounds: number): Promise<{ statuses: Map<number, number>; badStatuses: Set<number> }> {
  const attacker = await token({ tenant: uniqueTenant('nul'), scopes: [PUBLISH] });
  const victimTenant = uniqueTenant('victim');
  const victim = await token({ tenant: victimTenant, scopes: [PUBLISH] });
  expect((await call(app, 'POST', '/v1/tools', { token: victim, body: toolDocument() })).statusCode).toBe(201);
  expect((await call(app, 'POST', '/v1/tools', { token: attacker, body: toolDocument() })).statusCode).toBe(201);
  const statuses = new Map<number, number>();
  const badStatuses = new Set<number>();
  const count = (res: LightMyRequestResponse) => statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
  for (let round = 0; round < rounds; round += 1) {
    const bad = [
      call(app, 'GET', '/v1/tools?category=%00', { token: attacker }),
      call(app, 'GET', '/v1/tools?tags=a%00b', { token: attacker }),
      rawJson(app, 'POST', '/v1/authorize', attacker, '{"tool":"issue_refund","arguments":{"invoice_id":"x","a\\u0000b":1}}'),
    ];
    const good = Array.from({ length: 4 }, () => call(app, 'GET', '/v1/tools', { token: victim }));
    const settled = await Promise.all([...bad, ...good]);
    for (const res of settled.slice(0, bad.length)) badStatuses.add(res.statusCode);
    settled.slice(bad.length).forEach(count);
  }
  return { statuses, badStatuses };
}

describe('failed statements on the embedded database (PGlite thread + socket server, pool of 4)', () => {
  let database: Database;
  let app: FastifyInstance;
  let connects = 0;

  beforeAll(async () => {
    database = await openEmbedded('memory://', 4);
    await migrate(database);
    database.pool!.on('connect', () => (connects += 1));
    app = await buildTestApp({ database });
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  it('never costs another tenant a 503, and opens no new connection per failed statement', async () => {
    const before = connects;
    const { statuses, badStatuses } = await replay(app, 40);
    expect(Object.fromEntries(statuses)).toEqual({ 200: 160 });
    expect([...badStatuses].every((status) => status >= 400 && status < 500 ? true : status === 200)).toBe(true);
    expect(badStatuses.has(503)).toBe(false);
    // The pool warmed up to its size at most once: a refused statement keeps its connection.
    expect(connects - before).toBeLessThanOrEqual(4);
  });

  it('keeps the connection a statement failed on (database level)', async () => {
    const before = connects;
    for (let i = 0; i < 20; i += 1) {
      await expect(database.db.execute('select $1::int')).rejects.toThrow();
      await expect(database.pool!.query('select $1::text', ['a\u0000b'])).rejects.toThrow(/0x00/);
    }
    expect(connects - before).toBe(0);
    expect(database.pool!.totalCount).toBeLessThanOrEqual(4);
  });
});

forEachDatabase((db) => {
  describe('failed statements beside another tenant', () => {
    let app: FastifyInstance;
    beforeAll(async () => {
      app = await buildTestApp({ database: db.database });
    });
    afterAll(async () => app?.close());

    it('answers the bad requests 4xx and never costs the other tenant a 503', async () => {
      const { statuses, badStatuses } = await replay(app, 15);
      expect(Object.fromEntries(statuses)).toEqual({ 200: 60 });
      expect(badStatuses.has(503)).toBe(false);
      expect(badStatuses.has(500)).toBe(false);
    });

    it('refuses a NUL in list filters with 400 naming the field, before the database', async () => {
      const caller = await token({ tenant: uniqueTenant('nul-list') });
      for (const [query, field] of [['category=%00', '/category'], ['tags=ok,a%00b', '/tags'], ['cursor=%00', '/cursor']] as const) {
        const res = await call(app, 'GET', `/v1/tools?${query}`, { token: caller });
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json<{ error: { details: { pointer: string; in: string }[] } }>().error.details[0]).toMatchObject({ pointer: field, in: 'querystring' });
      }
    });
  });
});
