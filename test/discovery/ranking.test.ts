import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildApp } from '../../src/app.js';
import { LocalEmbedder } from '../../src/embedding/local.js';
import { call, testConfig, testDependencies } from '../helpers/app.js';
import { databaseLegs, type TestDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token } from '../helpers/tokens.js';
import type { DiscoverResponse } from './helpers.js';

/**
 * Ranking behaviour with the real offline sentence encoder, on PGlite in-process (ranking does not
 * depend on the driver; the security suites run on every leg).
 */
describe('ranking with the local sentence encoder (PGlite in-process)', () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let caller: string;

  const catalog = [
    toolDocument({
      name: 'search_orders',
      description: 'Search orders by customer, date range or status and return a page of matches.',
      summary: 'Search orders by customer, date or status.',
      not_for: 'Not for fetching one order whose id you know; use find_order.',
      aliases: ['list my orders', 'orders from last week'],
      examples: ['show all open orders for ACME placed in March'],
      tags: ['orders'],
      category: 'commerce',
      required_scopes: [],
      side_effects: false,
    }),
    toolDocument({
      name: 'find_order',
      description: 'Fetch one order by its order id, with its lines, totals and status.',
      summary: 'Fetch one order by id.',
      not_for: 'Not for searching or listing orders; use search_orders.',
      aliases: ['look up order number', 'get order details'],
      examples: ['what is in order 48213?'],
      tags: ['orders'],
      category: 'commerce',
      required_scopes: [],
      side_effects: false,
    }),
    toolDocument({
      name: 'track_freight',
      description: 'Report the carrier status, current location and estimated delivery of a freight shipment.',
      summary: 'Track a freight shipment.',
      not_for: undefined,
      aliases: ['why is my package late', 'where is my parcel', 'delivery delayed'],
      examples: ['has shipment 1Z999 left the warehouse?'],
      tags: ['logistics'],
      category: 'logistics',
      required_scopes: [],
      side_effects: false,
    }),
    toolDocument({ name: 'issue_refund', required_scopes: [] }),
    toolDocument({
      name: 'terminate_batch_process',
      description: 'Terminate a running batch process on the compute cluster by its process id.',
      summary: 'Kill a batch process.',
      not_for: undefined,
      aliases: [],
      examples: [],
      tags: ['ops'],
      category: 'devops',
      required_scopes: [],
      side_effects: true,
    }),
  ];

  beforeAll(async () => {
    database = await databaseLegs()[0]!.open();
    app = await buildApp({ ...testDependencies(testConfig(), database.database), embedder: await LocalEmbedder.load() });
    await app.ready();
    const publisher = await token({ tenant: 'ranking', scopes: [PUBLISH] });
    for (const doc of catalog) expect((await call(app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
    await app.indexer?.flush();
    caller = await token({ tenant: 'ranking', scopes: [] });
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const top = async (query: string) => {
    const response = await call(app, 'POST', '/v1/discover', { token: caller, body: { query, top_k: 3 } });
    expect(response.statusCode).toBe(200);
    return response.json<DiscoverResponse>();
  };

  it('tells the near-duplicate pair apart and shows their not_for guidance', async () => {
    const lookup = await top('look up order 48213 and show me its details');
    expect(lookup.tools[0]!.name).toBe('find_order');
    expect(lookup.tools[0]!.card.not_for).toMatch(/use search_orders/);
    const search = await top('list every open order ACME placed last month');
    expect(search.tools[0]!.name).toBe('search_orders');
    expect(search.tools[0]!.card.not_for).toMatch(/use find_order/);
  });

  it('reaches the freight tracker from "why is my package late" through its aliases', async () => {
    const result = await top('why is my package late');
    expect(result.tools[0]!.name).toBe('track_freight');
    expect(result.low_confidence).toBe(false);
  });

  it('finds intent phrased in other words: "stop the stuck job"', async () => {
    expect((await top('stop the stuck job on the cluster')).tools[0]!.name).toBe('terminate_batch_process');
  });

  it('returns nothing, or flags low confidence, for a request no tool serves', async () => {
    const result = await top('asdf qwerty zxcv');
    expect(result.tools.length === 0 || result.low_confidence).toBe(true);
  });
});
