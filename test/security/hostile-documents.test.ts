import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { call, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { expectCleanError, rawJson, tenantFootprint } from './helpers.js';

const EMPTY = { tools: 0, versions: 0, terms: 0, audit: 0 };

/**
 * Hostile tool documents through POST/PUT /v1/tools and the arguments /v1/authorize checks against
 * them. Each attack: a precise 4xx (never 500), the app keeps serving, and nothing is written.
 */
forEachDatabase((db) => {
  const t = useApp(db);

  async function attack(doc: unknown, expectedStatus = 400) {
    const tenant = uniqueTenant('hostile');
    const res = await call(t.app, 'POST', '/v1/tools', { token: await token({ tenant, scopes: [PUBLISH] }), body: doc });
    expectCleanError(res, expectedStatus);
    expect(await tenantFootprint(db.database, tenant)).toEqual(EMPTY);
    return res.json().error as { code: string; details: { pointer: string; message: string }[] };
  }

  async function attackRaw(payload: string, expectedStatus = 400) {
    const tenant = uniqueTenant('hostile');
    const res = await rawJson(t.app, 'POST', '/v1/tools', await token({ tenant, scopes: [PUBLISH] }), payload);
    expectCleanError(res, expectedStatus);
    expect(await tenantFootprint(db.database, tenant)).toEqual(EMPTY);
    return res.json().error as { code: string; details: { pointer: string; message: string }[] };
  }

  async function stillServes() {
    const res = await call(t.app, 'GET', '/v1/tools', { token: await token({ tenant: uniqueTenant() }) });
    expect(res.statusCode).toBe(200);
  }

  describe('hostile tool documents', () => {
    it('bounds a huge schema: 4,000 properties and a 20,000-value enum register or fail fast, never 500', async () => {
      const properties = Object.fromEntries(Array.from({ length: 4000 }, (_, i) => [`p${i}`, { type: 'string', maxLength: 10 }]));
      const started = performance.now();
      const tenant = uniqueTenant('huge');
      const tk = await token({ tenant, scopes: [PUBLISH] });
      const wide = await call(t.app, 'POST', '/v1/tools', { token: tk, body: toolDocument({ parameters: { type: 'object', properties } }) });
      expect([201, 413]).toContain(wide.statusCode);
      const values = Array.from({ length: 20_000 }, (_, i) => `v${i}`);
      const enumDoc = toolDocument({ name: 'big_enum', parameters: { type: 'object', properties: { v: { enum: values } } } });
      const big = await call(t.app, 'POST', '/v1/tools', { token: tk, body: enumDoc });
      expect([201, 413]).toContain(big.statusCode);
      // Generous: the point is "bounded", not fast, on a loaded 2-core machine.
      expect(performance.now() - started).toBeLessThan(20_000);
      await stillServes();
    });

    it('rejects 10,000-level nesting in parameters, arrays and extensions with the depth error', async () => {
      const depth = 10_000;
      // Compact shapes so 10,000 levels fit under the 256 KB body limit (a bigger body is a 413).
      const deepSchema = `{"type":"object","properties":{"n":${'{"items":'.repeat(depth)}{"type":"string"}${'}'.repeat(depth)}}}`;
      const base = JSON.stringify(toolDocument({ parameters: { type: 'object' }, returns: undefined }));
      for (const payload of [
        base.replace('"parameters":{"type":"object"}', `"parameters":${deepSchema}`),
        base.replace('"parameters":{"type":"object"}', `"parameters":{"type":"object","enum":[${'['.repeat(depth)}${']'.repeat(depth)}]}`),
        base.replace(/}$/, `,"x-deep":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`),
      ]) {
        const error = await attackRaw(payload);
        expect(error.details[0]!.message).toMatch(/nesting exceeds \d+ levels/);
      }
      await stillServes();
    });

    it("accepts a self-referential $ref: '#' and authorize survives 10,000-level arguments against it", async () => {
      const tenant = uniqueTenant('recursive');
      const tk = await token({ tenant, scopes: [PUBLISH] });
      const parameters = { type: 'object', properties: { child: { $ref: '#' }, label: { type: 'string' } } };
      const res = await call(t.app, 'POST', '/v1/tools', { token: tk, body: toolDocument({ name: 'tree', parameters }) });
      expect(res.statusCode, res.body).toBe(201);
      const shallow = await call(t.app, 'POST', '/v1/authorize', { token: tk, body: { tool: 'tree', arguments: { child: { child: { label: 'x' } } } } });
      expect(shallow.json().decision).toBe('allow');
      const depth = 10_000;
      const payload = `{"tool":"tree","arguments":${'{"child":'.repeat(depth)}{}${'}'.repeat(depth)}}`;
      const deep = await rawJson(t.app, 'POST', '/v1/authorize', tk, payload);
      expect(deep.statusCode, deep.body.slice(0, 300)).toBe(200);
      expect(deep.json()).toMatchObject({ decision: 'deny', reasons: [{ code: 'invalid_arguments' }] });
      await stillServes();
    });

    it('refuses patterns RE2 cannot match in linear time (backreferences, lookaround) at registration, naming the pointer', async () => {
      for (const [pattern, where] of [
        ['^(a)\\1$', 'pattern'],
        ['^(?!\\.)[a-z.]+$', 'pattern'],
        ['(?<=\\$)\\d+', 'pattern'],
        ['^(?<q>a)\\k<q>$', 'patternProperties'],
      ] as const) {
        const parameters =
          where === 'pattern'
            ? { type: 'object', properties: { code: { type: 'string', pattern, description: 'a code' } } }
            : { type: 'object', patternProperties: { [pattern]: { type: 'string' } } };
        const error = await attack(toolDocument({ parameters }));
        expect(error.details.map((d) => d.pointer)).toContain(
          where === 'pattern' ? '/parameters/properties/code/pattern' : `/parameters/patternProperties/${pattern}`,
        );
        expect(error.details.find((d) => /pattern/.test(d.pointer))!.message).toMatch(/linear time/);
      }
    });

    it('accepts the patterns that backtrack catastrophically and answers authorize on 10,000 characters (issue 32, finding 1)', async () => {
      const tenant = uniqueTenant('safe-patterns');
      const tk = await token({ tenant, scopes: [PUBLISH] });
      const patterns = ['^.*.*.*.*x$', '^(a+)+$', '^(a|aa)+$', '^[a-z0-9_-]{3,32}$', '^(\\d+\\.)+\\d+$', '^([a-z]+,)*[a-z]+$', '^(foo|bar)$', '^\\+?[0-9 ()-]{7,20}$'];
      const properties = Object.fromEntries(patterns.map((pattern, i) => [`p${i}`, { type: 'string', pattern }]));
      const res = await call(t.app, 'POST', '/v1/tools', { token: tk, body: toolDocument({ name: 'patterns', parameters: { type: 'object', properties } }) });
      expect(res.statusCode, res.body).toBe(201);
      // On the backtracking engine the first alone took 37.6 s at 600 characters; no timing is
      // asserted here (scripts/attack-replay.ts measures it): a hang would time the test out.
      for (const [i, input] of [[0, 'a'.repeat(10_000)], [1, `${'a'.repeat(9_999)}b`], [2, `${'a'.repeat(9_999)}b`]] as const) {
        const evil = await call(t.app, 'POST', '/v1/authorize', { token: tk, body: { tool: 'patterns', arguments: { [`p${i}`]: input } } });
        expect(evil.json()).toMatchObject({ decision: 'deny', reasons: [{ code: 'invalid_arguments', pointer: `/arguments/p${i}` }] });
      }
      const good = await call(t.app, 'POST', '/v1/authorize', { token: tk, body: { tool: 'patterns', arguments: { p0: `${'a'.repeat(9_999)}x`, p3: 'abc', p4: '1.2.3', p6: 'foo' } } });
      expect(good.json().decision).toBe('allow');
    });

    it('answers long inputs that made V8 backtrack or the tokenizer merge quadratically: a property name, a url argument, a number (2026-12-06 audit)', async () => {
      const tenant = uniqueTenant('long-inputs');
      const tk = await token({ tenant, scopes: [PUBLISH] });
      // Each took 3-5 s at 100,000 characters before (20-30 s at the body limit); no timing is
      // asserted: a hang would time the test out.
      const capitals = 'A'.repeat(100_000);
      const doc = toolDocument({ name: 'links', parameters: { type: 'object', properties: { link: { type: 'string', format: 'url', description: 'A web page.' }, [capitals]: { type: 'string', description: 'A value.' } } } });
      const published = await call(t.app, 'POST', '/v1/tools', { token: tk, body: doc });
      expect(published.statusCode, published.body).toBe(201);
      const colons = await call(t.app, 'POST', '/v1/authorize', { token: tk, body: { tool: 'links', arguments: { link: `http://${':'.repeat(100_000)}` } } });
      expect(colons.json()).toMatchObject({ decision: 'deny', reasons: [{ code: 'invalid_arguments', pointer: '/arguments/link' }] });
      const long = await call(t.app, 'POST', '/v1/authorize', { token: tk, body: { tool: 'links', arguments: { link: `https://example.com/${'x'.repeat(100_000)}` } } });
      expect(long.json().decision).toBe('allow');
      const number = await rawJson(t.app, 'POST', '/v1/authorize', tk, `{"tool":"links","arguments":{"n":1.${'0'.repeat(100_000)}1}}`);
      expectCleanError(number, 400);
      expect(number.json().error.details[0].pointer).toBe('/arguments/n');
      await stillServes();
    });

    it('refuses a schema with more patterns than the limit, naming the limit, on a dry run too (issue 32, finding 5)', async () => {
      const properties = Object.fromEntries(Array.from({ length: 400 }, (_, i) => [`p${i}`, { type: 'string', pattern: `^(a|b|c)*${'x'.repeat(200)}${i}$` }]));
      const tenant = uniqueTenant('many-patterns');
      const res = await call(t.app, 'POST', '/v1/tools?dry_run=true', { token: await token({ tenant, scopes: [PUBLISH] }), body: toolDocument({ parameters: { type: 'object', properties } }) });
      expectCleanError(res, 400);
      expect(await tenantFootprint(db.database, tenant)).toEqual(EMPTY);
      expect((res.json().error as { details: unknown[] }).details).toContainEqual(expect.objectContaining({ message: expect.stringContaining('at most 128 patterns') }));
    });

    it('keeps /v1/authorize from hanging on a catastrophic pattern already stored before the check existed', async () => {
      const tenant = uniqueTenant('redos');
      const tk = await token({ tenant, scopes: [PUBLISH] });
      expect((await call(t.app, 'POST', '/v1/tools', { token: tk, body: toolDocument({ name: 'coded' }) })).statusCode).toBe(201);
      // Simulate a row stored by an older release: patch the stored parameters directly.
      const evil = { type: 'object', properties: { code: { type: 'string', pattern: '^(a)\\1+$' } } };
      await db.database.db.execute(
        `update tools set document = jsonb_set(document, '{parameters}', '${JSON.stringify(evil)}'::jsonb), revision = revision + 1 where tenant_id = '${tenant}'`,
      );
      const started = performance.now();
      const res = await call(t.app, 'POST', '/v1/authorize', { token: tk, body: { tool: 'coded', arguments: { code: `${'a'.repeat(50_000)}b` } } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().decision).toBe('deny');
      expect(performance.now() - started).toBeLessThan(5_000);
    });

    it('bounds the input a safe pattern is run on: a 100 KB argument is denied, not scanned', async () => {
      const tenant = uniqueTenant('longarg');
      const tk = await token({ tenant, scopes: [PUBLISH] });
      const parameters = { type: 'object', properties: { text: { type: 'string', pattern: '^[a-z ]*$', description: 'text' } }, required: ['text'] };
      expect((await call(t.app, 'POST', '/v1/tools', { token: tk, body: toolDocument({ name: 'texty', parameters }) })).statusCode).toBe(201);
      const ok = await call(t.app, 'POST', '/v1/authorize', { token: tk, body: { tool: 'texty', arguments: { text: 'hello world' } } });
      expect(ok.json().decision).toBe('allow');
      const long = await call(t.app, 'POST', '/v1/authorize', { token: tk, body: { tool: 'texty', arguments: { text: 'a'.repeat(100_000) } } });
      expect(long.statusCode).toBe(200);
      expect(long.json()).toMatchObject({ decision: 'deny', reasons: [{ code: 'invalid_arguments', pointer: '/arguments/text' }] });
    });

    it('never pollutes Object.prototype: __proto__ and constructor.prototype anywhere are rejected or inert', async () => {
      const tenant = uniqueTenant('proto');
      const tk = await token({ tenant, scopes: [PUBLISH] });
      const base = JSON.stringify(toolDocument({ name: 'proto_tool' }));
      const payloads = [
        base.replace(/^\{/, '{"__proto__":{"polluted":"yes"},'),
        base.replace('"invoice_id":{', '"invoice_id":{"__proto__":{"polluted":"yes"},'),
        base.replace(/^\{/, '{"constructor":{"prototype":{"polluted":"yes"}},'),
        base.replace(/}$/, ',"x-meta":{"constructor":{"prototype":{"polluted":"yes"}}}}'),
      ];
      for (const payload of payloads) {
        const res = await rawJson(t.app, 'POST', '/v1/tools', tk, payload);
        expectCleanError(res, 400);
      }
      // Property names __proto__ / constructor inside a JSON Schema are legitimate data, never applied.
      const res = await call(t.app, 'POST', '/v1/authorize', {
        token: tk,
        body: { tool: 'proto_tool', arguments: JSON.parse('{"invoice_id":"x","__proto__":{"polluted":"yes"}}') },
      });
      expect(res.statusCode).toBeLessThan(500);
      const discover = await rawJson(t.app, 'POST', '/v1/discover', tk, '{"query":"refund","__proto__":{"top_k":10}}');
      expect(discover.statusCode).toBeLessThan(500);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.prototype).not.toHaveProperty('polluted');
      expect(await tenantFootprint(db.database, tenant)).toEqual(EMPTY);
    });

    describe('remote and file references', () => {
      let hits = 0;
      let url = '';
      const server = createServer((_req, res) => {
        hits += 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"type":"string"}');
      });
      beforeAll(async () => {
        await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
        url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      });
      afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

      it('never fetches: http, file and relative $refs, remote $schema and $id-relative refs are rejected', async () => {
        const cases: Record<string, unknown>[] = [
          { type: 'object', properties: { a: { $ref: `${url}/a.json` } } },
          { type: 'object', properties: { a: { $ref: 'file:///etc/passwd' } } },
          { type: 'object', properties: { a: { $ref: 'other.json#/x' } } },
          { type: 'object', $id: `${url}/root.json`, properties: { a: { $ref: 'sibling.json' } } },
          { $schema: `${url}/schema`, type: 'object' },
          { type: 'object', properties: { a: { $dynamicRef: `${url}/d.json` } } },
          { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { a: { $ref: `${url}/b.json` } } },
        ];
        for (const parameters of cases) await attack(toolDocument({ parameters }));
        await attack(toolDocument({ returns: { $ref: `${url}/r.json` } }));
        expect(hits).toBe(0);
      });
    });

    it('rejects control characters and unpaired surrogates with a pointer instead of failing in the database', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [toolDocument({ name: 'bad\u0000name' }), '/name'],
        [toolDocument({ name: 'bad\u202ename' }), '/name'],
        [toolDocument({ description: 'Refund\u0000 an invoice.' }), '/description'],
        [toolDocument({ summary: 'Refund\u0007 a paid invoice.' }), '/summary'],
        [toolDocument({ aliases: ['give money\u0000 back'] }), '/aliases/0'],
        [toolDocument({ parameters: { type: 'object', properties: { a: { type: 'string', description: 'x\u0000y' } } } }), '/parameters/properties/a/description'],
        [toolDocument({ parameters: { type: 'object', properties: { 'a\u0000b': { type: 'string' } } } }), '/parameters/properties/a\u0000b'],
        [toolDocument({ description: 'Refund \ud800 an invoice.' }), '/description'],
        [toolDocument({ 'x-note': 'lone \udc00 surrogate' }), '/x-note'],
      ];
      for (const [doc, pointer] of cases) {
        const error = await attack(doc);
        expect(error.details.map((d) => d.pointer)).toContain(pointer);
      }
      // Raw invalid UTF-8 bytes are decoded to U+FFFD, which is ordinary text.
      const tenant = uniqueTenant('utf8');
      const bytes = Buffer.concat([Buffer.from(JSON.stringify(toolDocument({ description: 'Refund XX an invoice.' })).split('XX')[0]!), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(' an invoice.","summary":"Refund."}')]);
      const text = bytes.toString('latin1');
      expect(text.length).toBeGreaterThan(0);
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/tools',
        headers: { authorization: `Bearer ${await token({ tenant, scopes: [PUBLISH] })}`, 'content-type': 'application/json' },
        payload: Buffer.concat([Buffer.from(JSON.stringify(toolDocument({ description: 'Refund ' })).replace('"Refund "', '"Refund ')), Buffer.from([0xff, 0xfe]), Buffer.from('"')]),
      });
      expect([201, 400]).toContain(res.statusCode);
      if (res.statusCode === 400) expectCleanError(res, 400);
      // Tabs and newlines in descriptions stay legal.
      expect((await call(t.app, 'POST', '/v1/tools', { token: await token({ tenant: uniqueTenant(), scopes: [PUBLISH] }), body: toolDocument({ description: 'Line one.\n\tLine two.' }) })).statusCode).toBe(201);
      await stillServes();
    });

    it('rejects duplicate JSON keys instead of silently keeping one of them', async () => {
      const base = JSON.stringify(toolDocument({ required_scopes: ['billing:admin'] }));
      const error = await attackRaw(base.replace(/}$/, ',"required_scopes":[]}'));
      expect(error.details).toEqual([expect.objectContaining({ pointer: '/required_scopes', message: expect.stringMatching(/duplicate/i) })]);
      const nested = await attackRaw(base.replace('"invoice_id":{', '"invoice_id":{"type":"number",'));
      expect(nested.details[0]!.pointer).toBe('/parameters/properties/invoice_id/type');
      // Keys equal only after escapes count as duplicates too.
      await attackRaw(base.replace(/}$/, ',"required_\\u0073copes":[]}'));
    });
  });
});
