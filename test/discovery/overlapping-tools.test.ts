import { beforeAll, describe, expect, it } from 'vitest';

import { LocalEmbedder } from '../../src/embedding/local.js';
import { FORMATS } from '../../src/tools/formats.js';
import { ORDER_TOOLS } from '../fixtures/order-tools.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { type DiscoverResponse, useDiscoveryApp } from './helpers.js';

let encoder: LocalEmbedder | undefined;
// Loaded before any leg's app is built (the legs' hooks run inside their own describe blocks).
beforeAll(async () => {
  encoder = await LocalEmbedder.load();
}, 60_000);

/**
 * The textbook case of overlapping tools, with the real offline sentence encoder on every
 * database leg: a request naming an order number goes to the tool whose guidance says it takes
 * order numbers, not to the order search or the fleet telemetry that share its words.
 */
forEachDatabase((db) => {
  // A generous embedding budget: on a loaded machine a timed-out query embedding would turn the search lexical.
  const ctx = useDiscoveryApp(db, () => encoder, { EMBEDDING_TIMEOUT_MS: '30000' });
  const tenant = uniqueTenant('orders');
  let caller = '';

  beforeAll(async () => {
    const publisher = await token({ tenant, scopes: [PUBLISH] });
    for (const body of ORDER_TOOLS) expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body })).statusCode).toBe(201);
    await ctx.flush();
    caller = await token({ tenant, scopes: [] });
  }, 60_000);

  const discover = async (query: string, format: string) => {
    const response = await call(ctx.app, 'POST', '/v1/discover', { token: caller, body: { query, format, top_k: 3 } });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<DiscoverResponse>();
  };

  describe('POST /v1/discover with overlapping order tools', () => {
    it.each([...FORMATS])('puts find_order first for "Where is John\'s order #94218?" (%s)', async (format) => {
      const result = await discover("Where is John's order #94218?", format);
      expect(result.tools.map((t) => t.name)[0]).toBe('find_order');
      expect(result.low_confidence).toBe(false);
    });

    it('sends a search over many orders to search_orders', async () => {
      expect((await discover('show me all orders John placed last month', 'openai')).tools[0]!.name).toBe('search_orders');
    });

    it('sends a question about a truck to the fleet telemetry', async () => {
      expect((await discover('where is truck TRK-2231 right now and how fast is it going', 'openai')).tools[0]!.name).toBe('query_freight_telemetry');
    });
  });
});
