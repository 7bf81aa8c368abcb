import { describe, expect, it } from 'vitest';

import { FORMATS } from '../../src/tools/formats.js';
import { tokensOf } from '../../src/tools/tokens.js';
import { call, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

const NOT_FOR = 'Not for cancelling unpaid orders; use cancel_order.';

/** Every rendered format through POST /v1/discover, on every database leg: shapes, not_for, strict, tokens. */
forEachDatabase((db) => {
  const t = useApp(db);

  describe('POST /v1/discover formats', () => {
    it('renders every format with not_for in the description, and counts what it sends', async () => {
      const tenant = uniqueTenant('formats');
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      expect((await call(t.app, 'POST', '/v1/tools', { token: publisher, body: toolDocument() })).statusCode).toBe(201);
      const reader = await token({ tenant });
      const description = `${toolDocument().description as string}\n\n${NOT_FOR}`;
      const shapes: Record<string, (schema: Record<string, unknown>) => void> = {
        openai: (s) => expect(s).toMatchObject({ type: 'function', function: { name: 'issue_refund', description, parameters: { type: 'object' } } }),
        'openai-responses': (s) => expect(s).toMatchObject({ type: 'function', name: 'issue_refund', description, parameters: { type: 'object' }, strict: false }),
        anthropic: (s) => expect(s).toMatchObject({ name: 'issue_refund', description, input_schema: { type: 'object' } }),
        gemini: (s) => expect(s).toMatchObject({ name: 'issue_refund', description, parametersJsonSchema: { type: 'object' }, responseJsonSchema: { type: 'object' } }),
        mcp: (s) => expect(s).toMatchObject({ name: 'issue_refund', title: 'Issue refund', description, inputSchema: { type: 'object' }, annotations: { readOnlyHint: false, destructiveHint: true } }),
        raw: (s) => expect(s).toMatchObject({ name: 'issue_refund', description, parameters: { type: 'object' } }),
      };
      expect(Object.keys(shapes).sort()).toEqual([...FORMATS].sort());
      for (const format of FORMATS) {
        const res = await call(t.app, 'POST', '/v1/discover', { token: reader, body: { query: 'issue_refund', format } });
        expect(res.statusCode, res.body).toBe(200);
        const [tool] = res.json().tools as { schema: Record<string, unknown>; card: { tokens: Record<string, number> } }[];
        shapes[format]!(tool!.schema);
        expect(tool!.card.tokens[format]).toBe(tokensOf(tool!.schema));
        expect(res.json().tokens.shortlist).toBe(tokensOf(tool!.schema));
      }
      expect((await call(t.app, 'POST', '/v1/discover', { token: reader, body: { query: 'refund', format: 'cohere' } })).statusCode).toBe(400);
    });

    it('sets OpenAI strict only for a schema strict mode accepts', async () => {
      const tenant = uniqueTenant('strict');
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      const parameters = { type: 'object', additionalProperties: false, properties: { city: { type: 'string', description: 'City name' } }, required: ['city'] };
      expect((await call(t.app, 'POST', '/v1/tools', { token: publisher, body: toolDocument({ name: 'get_weather', parameters, not_for: undefined }) })).statusCode).toBe(201);
      const reader = await token({ tenant });
      const openai = (await call(t.app, 'POST', '/v1/discover', { token: reader, body: { query: 'get_weather', format: 'openai' } })).json();
      expect(openai.tools[0].schema.function.strict).toBe(true);
      const responses = (await call(t.app, 'POST', '/v1/discover', { token: reader, body: { query: 'get_weather', format: 'openai-responses' } })).json();
      expect(responses.tools[0].schema).toMatchObject({ strict: true, description: toolDocument().description });
    });
  });
});
