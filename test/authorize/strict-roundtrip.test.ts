import { describe, expect, it } from 'vitest';

import { tokensOf } from '../../src/tools/tokens.js';
import { call, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

const parameters = {
  type: 'object',
  properties: {
    invoice_id: { type: 'string', description: 'The invoice.', minLength: 3 },
    amount: { type: 'number', minimum: 0 },
    note: { type: ['string', 'null'] },
    address: { type: 'object', properties: { city: { type: 'string' }, zip: { type: 'string' } }, required: ['city'] },
  },
  required: ['invoice_id'],
};

/**
 * POST /v1/discover with `strict: true`, then the model's strict call at POST /v1/authorize, on
 * every database leg: the nulls strict mode makes the model send for what it leaves out decide
 * exactly as the original call without them.
 */
forEachDatabase((db) => {
  const t = useApp(db);

  describe('OpenAI strict rendering, end to end', () => {
    const setup = async () => {
      const tenant = uniqueTenant('strict');
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      expect((await call(t.app, 'POST', '/v1/tools', { token: publisher, body: toolDocument({ parameters }) })).statusCode).toBe(201);
      const open = toolDocument({ name: 'tag_invoice', parameters: { type: 'object', properties: { tags: { type: 'object', description: 'Any tags.' } } } });
      expect((await call(t.app, 'POST', '/v1/tools', { token: publisher, body: open })).statusCode).toBe(201);
      return token({ tenant });
    };

    it('renders every property required, optional ones nullable, with strict: true, and counts the tokens it sends', async () => {
      const reader = await setup();
      for (const format of ['openai', 'openai-responses'] as const) {
        const res = await call(t.app, 'POST', '/v1/discover', { token: reader, body: { query: 'issue_refund', format, strict: true, top_k: 1 } });
        expect(res.statusCode, res.body).toBe(200);
        const [tool] = res.json().tools;
        const fn = format === 'openai' ? tool.schema.function : tool.schema;
        expect(fn.strict).toBe(true);
        expect(tool).not.toHaveProperty('strict_fallback');
        // Stored documents keep keys in the database's order: compare the set.
        expect([...fn.parameters.required].sort()).toEqual(['address', 'amount', 'invoice_id', 'note']);
        expect(fn.parameters).toMatchObject({
          additionalProperties: false,
          properties: { invoice_id: { type: 'string', description: 'The invoice. (minLength: 3)' }, amount: { type: ['number', 'null'] }, note: { type: ['string', 'null'] } },
        });
        expect(res.json().tokens.shortlist).toBe(tokensOf(tool.schema));
      }
    });

    it('falls back to strict: false with the reason for a schema that has no strict form', async () => {
      const reader = await setup();
      const res = await call(t.app, 'POST', '/v1/discover', { token: reader, body: { query: 'tag_invoice', format: 'openai', strict: true, top_k: 1 } });
      const [tool] = res.json().tools;
      expect(tool.name).toBe('tag_invoice');
      expect(tool.schema.function.strict).toBe(false);
      expect(tool.strict_fallback).toMatch(/\/properties\/tags: an object with free-form keys/);
    });

    it('refuses strict beside a format that has no strict mode (400 naming /strict)', async () => {
      const reader = await setup();
      const res = await call(t.app, 'POST', '/v1/discover', { token: reader, body: { query: 'refund', format: 'anthropic', strict: true } });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.details).toEqual([expect.objectContaining({ pointer: '/strict' })]);
    });

    it('authorizes a strict call with nulls as the original call without them, and returns the arguments to run', async () => {
      const reader = await setup();
      const authorize = async (args: Record<string, unknown>) => {
        const res = await call(t.app, 'POST', '/v1/authorize', { token: reader, body: { tool: 'issue_refund', arguments: args } });
        expect(res.statusCode, res.body).toBe(200);
        return res.json();
      };
      const original = await authorize({ invoice_id: 'inv_1024', address: { city: 'Oslo' } });
      const strictCall = await authorize({ invoice_id: 'inv_1024', amount: null, note: null, address: { city: 'Oslo', zip: null } });
      expect(original).toEqual({ decision: 'allow', reasons: [], tool: { name: 'issue_refund', version: '1.0.0' } });
      // `note` accepts null in the original schema: it is kept as sent.
      expect(strictCall).toEqual({ ...original, arguments: { invoice_id: 'inv_1024', note: null, address: { city: 'Oslo' } } });
      // Denials read the same too.
      const badOriginal = await authorize({ invoice_id: 'x', amount: -1 });
      const badStrict = await authorize({ invoice_id: 'x', amount: -1, note: null, address: null });
      expect(badStrict).toEqual(badOriginal);
      expect(badStrict.decision).toBe('deny');
      // A null for a required property is not "absent": it is refused.
      expect((await authorize({ invoice_id: null })).reasons).toEqual([expect.objectContaining({ code: 'invalid_arguments', pointer: '/arguments/invoice_id' })]);
    });
  });
});
