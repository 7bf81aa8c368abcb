import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Database } from '../../src/db/client.js';
import { buildTestApp, call } from '../helpers/app.js';
import { databaseLegs, forEachDatabase, type TestDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { eventually } from '../helpers/replica.js';
import { failedStart, type ServiceProcess, startService } from '../helpers/server-process.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

/** One service replica as a test talks to it: in-process (app.inject) or a real process (HTTP). */
type Replica = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, bearer: string, body?: unknown) => Promise<{ status: number; json: unknown }>;

const inProcess =
  (app: FastifyInstance): Replica =>
  async (method, url, bearer, body) => {
    const res = await call(app, method, url, { token: bearer, body });
    return { status: res.statusCode, json: res.json() };
  };

const overHttp =
  (service: ServiceProcess): Replica =>
  async (method, url, bearer, body) => {
    const res = await fetch(`${service.base}${url}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: await res.json() };
  };

interface View {
  names: string[];
  catalog: number;
}

async function view(replica: Replica, bearer: string): Promise<View> {
  const res = await replica('POST', '/v1/discover', bearer, { query: 'invoice', top_k: 10 });
  expect(res.status).toBe(200);
  const body = res.json as { tools: { name: string }[]; tokens: { catalog: number } };
  return { names: body.tools.map((t) => t.name).sort(), catalog: body.tokens.catalog };
}

const invoiceTool = (name: string, overrides: Record<string, unknown> = {}) =>
  toolDocument({ name, description: `${name.replace(/_/g, ' ')}: act on an invoice of the billing system.`, ...overrides });

/**
 * Two service replicas on one database, each with its own caches (catalog statistics and token
 * totals, compiled validators, query embeddings). A write through one must show in the other's
 * discovery (shortlist and catalog token total) within a second.
 */
async function agreementScenario(a: Replica, b: Replica): Promise<{ waits: number[]; firstTry: boolean[] }> {
  const tenant = uniqueTenant('replicas');
  const publisher = await token({ tenant, scopes: [PUBLISH] });
  const agent = await token({ tenant, scopes: [] });
  for (const name of ['refund_invoice', 'void_invoice']) expect((await a('POST', '/v1/tools', publisher, invoiceTool(name))).status).toBe(201);
  const waits: number[] = [];
  const firstTry: boolean[] = [];
  // Both replicas have cached their statistics before each write.
  const agree = async (expected: string[]): Promise<View> => {
    const truth = await view(a, agent);
    expect(truth.names).toEqual(expected);
    let attempts = 0;
    const agreed = async () => {
      attempts += 1;
      return JSON.stringify(await view(b, agent)) === JSON.stringify(truth);
    };
    waits.push(await eventually(agreed, 1_000, `replica B agrees on ${expected.join(', ')}`));
    firstTry.push(attempts === 1);
    return truth;
  };
  const initial = await agree(['refund_invoice', 'void_invoice']);

  expect((await a('POST', '/v1/tools', publisher, invoiceTool('send_invoice'))).status).toBe(201);
  const published = await agree(['refund_invoice', 'send_invoice', 'void_invoice']);
  expect(published.catalog).toBeGreaterThan(initial.catalog);

  expect((await a('DELETE', '/v1/tools/void_invoice', publisher)).status).toBe(200);
  const retired = await agree(['refund_invoice', 'send_invoice']);
  expect(retired.catalog).toBeLessThan(published.catalog);

  const tightened = invoiceTool('refund_invoice', { version: '2.0.0', required_scopes: ['billing:admin'], sensitivity: 'high' });
  expect((await a('PUT', '/v1/tools/refund_invoice', publisher, tightened)).status).toBe(200);
  const scoped = await agree(['send_invoice']);
  expect(scoped.catalog).toBeLessThan(retired.catalog);
  // The holder of the new scope sees it on both, with the same totals.
  const admin = await token({ tenant, scopes: ['billing:admin'] });
  expect(await view(b, admin)).toEqual(await view(a, admin));
  expect((await view(b, admin)).names).toEqual(['refund_invoice', 'send_invoice']);
  // Authorize on B follows the scope change too (it reads the current row, never a cache).
  expect((await b('POST', '/v1/authorize', agent, { tool: 'refund_invoice', arguments: { invoice_id: 'inv_1' } })).json).toMatchObject({ decision: 'deny' });
  return { waits, firstTry };
}

describe('two service replicas in one process, one database, separate caches', () => {
  forEachDatabase((db) => {
    let appA: FastifyInstance;
    let appB: FastifyInstance;
    let second: Database | undefined;
    beforeAll(async () => {
      appA = await buildTestApp({ database: db.database });
      // Wire legs: B has a pool of its own, as another process would; PGlite in-process has one connection.
      second = db.leg === 'pglite' ? undefined : await db.current.connect();
      appB = await buildTestApp({ database: second ?? db.database });
    });
    afterAll(async () => {
      await appA?.close();
      await appB?.close();
    });

    it('agree after a publish, a retirement and a scope change, catalog token totals included', async () => {
      const { firstTry } = await agreementScenario(inProcess(appA), inProcess(appB));
      // No waiting at all: the very next discovery on B agrees.
      expect(firstTry).toEqual([true, true, true, true]);
    });
  });
});

const [, , postgresLeg] = databaseLegs();
const processSuite = postgresLeg!.skip === undefined ? describe : describe.skip;
processSuite(
  postgresLeg!.skip === undefined
    ? 'two real service processes (serve) on one PostgreSQL'
    : `two real service processes on one PostgreSQL: SKIPPED, ${postgresLeg!.skip}`,
  () => {
    let database: TestDatabase;
    let services: ServiceProcess[] = [];
    beforeAll(async () => {
      database = await postgresLeg!.open();
      services = await Promise.all([startService({ DATABASE_URL: database.url! }), startService({ DATABASE_URL: database.url! })]);
    }, 120_000);
    afterAll(async () => {
      for (const service of services) await service.stop();
      await database?.close();
    });

    it('agree within a second after a publish, a retirement and a scope change', async () => {
      const [a, b] = services.map(overHttp);
      const { waits, firstTry } = await agreementScenario(a!, b!);
      console.info(`service replicas: B agreed with A ${waits.map((ms) => `${ms.toFixed(0)} ms`).join(', ')} after each write`);
      expect(firstTry).toEqual([true, true, true, true]);
    }, 60_000);

    it('refuses to start when DATABASE_READ_URL names the primary, naming the variable', async () => {
      const { code, stderr } = await failedStart({ DATABASE_URL: database.url!, DATABASE_READ_URL: database.url! });
      expect(code).toBe(1);
      expect(stderr).toMatch(/error: DATABASE_READ_URL names a server that is not in recovery/);
    }, 60_000);
  },
);

describe('serve with DATABASE_READ_URL but no DATABASE_URL', () => {
  it('refuses to start, naming both variables', async () => {
    const { code, stderr } = await failedStart({ DATABASE_READ_URL: 'postgres://replica.invalid/registry', DATA_DIR: 'memory://' });
    expect(code).toBe(1);
    expect(stderr).toMatch(/error: DATABASE_READ_URL needs DATABASE_URL/);
  }, 60_000);
});
