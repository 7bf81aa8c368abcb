import { describe, expect, it } from 'vitest';

import { FORMATS } from '../../src/tools/formats.js';
import { ORDER_TOOLS } from '../fixtures/order-tools.js';
import { forEachDatabase } from '../helpers/databases.js';
import { useEncoderCatalog } from './helpers.js';

/**
 * The textbook case of overlapping tools, with the real offline sentence encoder on every
 * database leg: a request naming an order number goes to the tool whose guidance says it takes
 * order numbers, not to the order search or the fleet telemetry that share its words.
 */
forEachDatabase((db) => {
  const catalog = useEncoderCatalog(db, 'orders', ORDER_TOOLS);
  const discover = (query: string, format: string) => catalog.discover({ query, format });

  describe('POST /v1/discover with overlapping order tools', () => {
    it.each([...FORMATS])('puts find_order first for "Where is John\'s order #94218?" (%s)', async (format) => {
      const result = await discover("Where is John's order #94218?", format);
      expect(result.tools.map((t) => t.name)[0]).toBe('find_order');
      // Among eight tools, four of them about orders, the right one does not stand out far enough for
      // confidence (docs/ranking.md, "Small catalogs"); it leads the look-alikes all the same.
      expect(result.tools[0]!.score).toBeGreaterThan(result.tools[1]!.score);
    });

    it('sends a search over many orders to search_orders', async () => {
      expect((await discover('show me all orders John placed last month', 'openai')).tools[0]!.name).toBe('search_orders');
    });

    it('sends a question about a truck to the fleet telemetry', async () => {
      expect((await discover('where is truck TRK-2231 right now and how fast is it going', 'openai')).tools[0]!.name).toBe('query_freight_telemetry');
    });
  });
});
