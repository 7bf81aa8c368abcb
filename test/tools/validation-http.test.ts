import { describe, expect, it, vi } from 'vitest';

import { call, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

interface Detail {
  pointer: string;
  message: string;
  in?: string;
}

/** Registration validation through HTTP on every database leg: every error at once, with JSON pointers. */
forEachDatabase((db) => {
  const t = useApp(db);
  const small = useApp(db, { MAX_DESCRIPTION_LENGTH: '64', MAX_SUMMARY_LENGTH: '20', BODY_LIMIT_BYTES: '4096', MAX_SCHEMA_DEPTH: '6' });

  const post = async (body: unknown, app = t.app) =>
    call(app, 'POST', '/v1/tools', { token: await token({ tenant: uniqueTenant(), scopes: [PUBLISH] }), body });

  async function rejected(body: unknown, app = t.app): Promise<Detail[]> {
    const res = await post(body, app);
    expect(res.statusCode, res.body).toBe(400);
    const { error } = res.json();
    expect(error).toMatchObject({ code: 'validation_failed', message: 'tool document is invalid', request_id: expect.any(String) });
    for (const detail of error.details) expect(detail.in).toBe('body');
    return error.details;
  }
  const pointers = (details: Detail[]) => details.map((d) => d.pointer);

  describe('POST /v1/tools validation', () => {
    it('reports every problem at once, each with a JSON pointer', async () => {
      const details = await rejected({
        name: '9starts-with-digit',
        version: 'v1',
        description: 'x'.repeat(1025),
        summary: 's'.repeat(201),
        sensitivity: 'critical',
        require_scopes: ['billing:admin'],
        parameters: {
          type: 'object',
          properties: { amount: { type: 'numbr' }, invoice: { type: 'string' } },
          required: ['invoice'],
        },
      });
      expect(pointers(details)).toEqual(
        expect.arrayContaining([
          '/name',
          '/version',
          '/description',
          '/summary',
          '/sensitivity',
          '/require_scopes',
        ]),
      );
      expect(details.find((d) => d.pointer === '/version')?.message).toBe('must be a semantic version such as 1.2.0');
      expect(details.find((d) => d.pointer === '/require_scopes')?.message).toBe('must NOT have additional properties');
      // A required parameter without a description is a warning, never part of a refusal.
      expect(pointers(details)).not.toContain('/parameters/properties/invoice/description');
    });

    it('reports an invalid JSON Schema keyword with its pointer', async () => {
      const details = await rejected(toolDocument({ parameters: { type: 'object', properties: { amount: { type: 'numbr', description: 'how much' } } } }));
      expect(pointers(details)).toContain('/parameters/properties/amount/type');
    });

    it('refuses only an undeclared required parameter: missing descriptions, nested objects and array items included, are warnings', async () => {
      const parameters = (required: string[]) => ({
        type: 'object',
        properties: {
          invoice_id: { type: 'string' },
          address: {
            type: 'object',
            description: 'where to send it',
            properties: { city: { type: 'string', description: '  ' }, zip: { type: 'string', description: 'postal code' } },
            required: ['city', 'zip'],
          },
          lines: {
            type: 'array',
            description: 'invoice lines',
            items: { type: 'object', properties: { sku: { type: 'string' } }, required: ['sku'] },
          },
          ghost_ref: { type: 'string', description: 'ok' },
        },
        required,
      });
      const details = await rejected(toolDocument({ parameters: parameters(['invoice_id', 'address', 'lines', 'undeclared']) }));
      expect(pointers(details)).toEqual(['/parameters/properties/undeclared']);
      const created = await post(toolDocument({ parameters: parameters(['invoice_id', 'address', 'lines']) }));
      expect(created.statusCode, created.body).toBe(201);
      expect(created.json().warnings.filter((w: { code: string }) => w.code === 'parameter_description_missing').map((w: { pointer: string }) => w.pointer)).toEqual(
        [
          '/parameters/properties/address/properties/city/description',
          '/parameters/properties/invoice_id/description',
          '/parameters/properties/lines/items/properties/sku/description',
        ],
      );
    });

    it.each([
      ['an array root', { type: 'array', items: { type: 'string' } }, '/parameters/type'],
      ['no type', { properties: {} }, '/parameters/type'],
      ['a string', 'object', '/parameters'],
    ])('rejects parameters with %s', async (_label, parameters, pointer) => {
      const details = await rejected(toolDocument({ parameters }));
      expect(pointers(details)).toContain(pointer);
    });

    it('rejects a document without parameters', async () => {
      expect(pointers(await rejected(toolDocument({ parameters: undefined })))).toContain('/parameters');
    });

    it('rejects a body that is not an object', async () => {
      expect(await rejected([toolDocument()])).toEqual([{ pointer: '/', message: 'must be a JSON object', in: 'body' }]);
    });

    it.each([
      ['https://evil.example/schema.json', '/parameters/properties/invoice_id/$ref'],
      ['other.json#/definitions/x', '/parameters/properties/invoice_id/$ref'],
      ['//evil.example/x', '/parameters/properties/invoice_id/$ref'],
    ])('rejects the remote $ref %s without fetching it', async (ref, pointer) => {
      const fetchSpy = vi.spyOn(globalThis, 'fetch');
      try {
        const details = await rejected(
          toolDocument({ parameters: { type: 'object', properties: { invoice_id: { $ref: ref, description: 'id' } }, required: ['invoice_id'] } }),
        );
        expect(details).toContainEqual({ pointer, message: 'only local references ("#/...") are allowed; remote references are never fetched', in: 'body' });
        expect(fetchSpy).not.toHaveBeenCalled();
      } finally {
        fetchSpy.mockRestore();
      }
    });

    it('rejects a remote $ref in returns as well', async () => {
      const details = await rejected(toolDocument({ returns: { $ref: 'http://evil.example/r.json' } }));
      expect(pointers(details)).toEqual(['/returns/$ref']);
    });

    it('accepts draft 2020-12 with local $defs references', async () => {
      const res = await post(
        toolDocument({
          parameters: {
            $schema: 'https://json-schema.org/draft/2020-12/schema',
            type: 'object',
            $defs: { money: { type: 'number', minimum: 0 } },
            properties: { amount: { $ref: '#/$defs/money', description: 'amount' }, items: { type: 'array', prefixItems: [{ type: 'string' }] } },
            required: ['amount'],
          },
        }),
      );
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().parameters.$defs.money).toEqual({ type: 'number', minimum: 0 });
    });

    it('accepts draft-07 with local definitions references', async () => {
      const res = await post(
        toolDocument({
          parameters: {
            $schema: 'http://json-schema.org/draft-07/schema#',
            type: 'object',
            definitions: { money: { type: 'number', minimum: 0 } },
            properties: { amount: { $ref: '#/definitions/money', description: 'amount' }, tuple: { type: 'array', items: [{ type: 'string' }] } },
            required: ['amount'],
          },
        }),
      );
      expect(res.statusCode, res.body).toBe(201);
    });

    it('rejects an unsupported $schema dialect', async () => {
      const details = await rejected(toolDocument({ parameters: { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' } }));
      expect(pointers(details)).toEqual(['/parameters/$schema']);
    });

    it('rejects a local $ref that does not resolve', async () => {
      const details = await rejected(toolDocument({ parameters: { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } } }));
      expect(details).toHaveLength(1);
      expect(details[0]!.pointer).toBe('/parameters');
      expect(details[0]!.message).toMatch(/^does not compile: /);
    });

    it('keeps x- extension fields and rejects other unknown top-level fields', async () => {
      const res = await post(toolDocument({ 'x-owner': { team: 'billing', pager: ['alice'] }, 'x-rank': 3 }));
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ 'x-owner': { team: 'billing', pager: ['alice'] }, 'x-rank': 3 });
      const details = await rejected(toolDocument({ owner: 'billing', X_owner: 1 }));
      expect(pointers(details).sort()).toEqual(['/X_owner', '/owner']);
    });

    it('rejects high sensitivity without required_scopes, and accepts it with them', async () => {
      expect(await rejected(toolDocument({ sensitivity: 'high', required_scopes: [] }))).toEqual([
        { pointer: '/required_scopes', message: 'a tool with sensitivity "high" must declare required_scopes', in: 'body' },
      ]);
      expect(pointers(await rejected(toolDocument({ sensitivity: 'high', required_scopes: undefined })))).toEqual(['/required_scopes']);
      expect((await post(toolDocument({ sensitivity: 'high', required_scopes: ['billing:admin'] }))).statusCode).toBe(201);
    });

    it.each([
      ['sensitivity', 'secret', '/sensitivity'],
      ['side_effects', 'yes', '/side_effects'],
      ['tags', 'billing', '/tags'],
      ['required_scopes', ['has space'], '/required_scopes/0'],
      ['aliases', [''], '/aliases/0'],
      ['version', '1.0', '/version'],
      ['version', '01.0.0', '/version'],
    ])('rejects %s = %j', async (field, value, pointer) => {
      expect(pointers(await rejected(toolDocument({ [field]: value })))).toContain(pointer);
    });

    it('accepts semver with pre-release and build metadata', async () => {
      expect((await post(toolDocument({ version: '2.0.0-rc.1+build.5' }))).statusCode).toBe(201);
    });

    it('enforces the default description (1024) and summary (200) limits at the boundary', async () => {
      expect((await post(toolDocument({ description: 'd'.repeat(1024), summary: 's'.repeat(200) }))).statusCode).toBe(201);
      expect(pointers(await rejected(toolDocument({ description: 'd'.repeat(1025) })))).toEqual(['/description']);
      expect(pointers(await rejected(toolDocument({ summary: 's'.repeat(201) })))).toEqual(['/summary']);
    });

    it('enforces configured limits (MAX_DESCRIPTION_LENGTH, MAX_SUMMARY_LENGTH)', async () => {
      expect((await post(toolDocument({ description: 'd'.repeat(64), summary: 'short' }), small.app)).statusCode).toBe(201);
      const details = await rejected(toolDocument({ description: 'd'.repeat(65), summary: 's'.repeat(21) }), small.app);
      expect(details).toEqual([
        { pointer: '/description', message: 'must NOT have more than 64 characters', in: 'body' },
        { pointer: '/summary', message: 'must NOT have more than 20 characters', in: 'body' },
      ]);
    });

    it('derives a summary that fits the configured limit', async () => {
      const res = await post(toolDocument({ summary: undefined, description: 'Refunds a paid invoice in full or in part' }), small.app);
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().summary.length).toBeLessThanOrEqual(20);
    });

    it('rejects nesting deeper than MAX_SCHEMA_DEPTH', async () => {
      let nested: Record<string, unknown> = { type: 'string', description: 'leaf' };
      for (let i = 0; i < 5; i += 1) nested = { type: 'object', description: 'level', properties: { n: nested } };
      const fits = { type: 'object', properties: { n: nested } };
      expect((await post(toolDocument({ description: 'ok', summary: 'ok', parameters: fits }), small.app)).statusCode).toBe(201);
      const deeper = { type: 'object', properties: { n: { type: 'object', description: 'one more', properties: { n: nested } } } };
      const details = await rejected(toolDocument({ description: 'ok', summary: 'ok', parameters: deeper }), small.app);
      expect(details).toHaveLength(1);
      expect(details[0]!.message).toBe('schema nesting exceeds 6 levels');
    });

    it('rejects hostile deep nesting quickly, in parameters, returns and x- extensions alike', async () => {
      const depth = 5000;
      const deepObject = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
      const deepArray = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      const base = JSON.stringify(toolDocument({ parameters: { type: 'object' }, returns: undefined })).slice(0, -1);
      const started = performance.now();
      for (const body of [
        `${base.replace('"parameters":{"type":"object"}', `"parameters":{"type":"object","default":${deepObject}}`)}}`,
        `${base},"returns":{"type":"object","enum":${deepArray}}}`,
        `${base},"x-deep":${deepArray}}`,
        `${base},"x-deep":${deepObject}}`,
      ]) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/v1/tools',
          headers: { authorization: `Bearer ${await token({ tenant: uniqueTenant(), scopes: [PUBLISH] })}`, 'content-type': 'application/json' },
          payload: body,
        });
        expect(res.statusCode, res.body.slice(0, 300)).toBe(400);
        expect(res.json().error.details[0].message).toMatch(/nesting exceeds 32 levels/);
      }
      expect(performance.now() - started).toBeLessThan(2000);
    });

    it('is 413 in the error format when the body exceeds BODY_LIMIT_BYTES', async () => {
      const res = await post(toolDocument({ examples: Array.from({ length: 20 }, () => 'e'.repeat(300)) }), small.app);
      expect(res.statusCode).toBe(413);
      expect(res.json().error).toMatchObject({ code: 'payload_too_large', details: [], request_id: expect.any(String) });
    });

    it('is 400 in the error format for malformed JSON', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/tools',
        headers: { authorization: `Bearer ${await token({ scopes: [PUBLISH] })}`, 'content-type': 'application/json' },
        payload: '{"name": "broken",',
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'bad_request', details: [], request_id: expect.any(String) });
    });

    it('is 415 in the error format for a body that is not JSON', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/tools',
        headers: { authorization: `Bearer ${await token({ scopes: [PUBLISH] })}`, 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'name=issue_refund&version=1.0.0',
      });
      expect(res.statusCode).toBe(415);
      expect(res.json().error).toMatchObject({ code: 'unsupported_media_type', details: [] });
    });

    it('does not let __proto__ smuggle fields', async () => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/tools',
        headers: { authorization: `Bearer ${await token({ scopes: [PUBLISH] })}`, 'content-type': 'application/json' },
        payload: JSON.stringify(toolDocument()).replace(/^\{/, '{"__proto__":{"required_scopes":["x"]},'),
      });
      expect(res.statusCode).toBe(400);
    });

    it('validates PUT bodies with the same rules', async () => {
      const tenant = uniqueTenant();
      const tk = await token({ tenant, scopes: [PUBLISH] });
      expect((await call(t.app, 'POST', '/v1/tools', { token: tk, body: toolDocument() })).statusCode).toBe(201);
      const res = await call(t.app, 'PUT', '/v1/tools/issue_refund', { token: tk, body: toolDocument({ version: '2.0.0', sensitivity: 'high' }) });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.details).toEqual([{ pointer: '/required_scopes', message: 'a tool with sensitivity "high" must declare required_scopes', in: 'body' }]);
    });
  });
});
