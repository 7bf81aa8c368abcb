import { describe, expect, it } from 'vitest';

import { call, useApp } from '../helpers/app.js';
import { auditTrail } from '../helpers/audit.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

/**
 * The tools API through HTTP (app.inject) on every database leg: each rule of issue 2, its 4xx
 * cases and its security cases. Every test works in its own tenant.
 */
forEachDatabase((db) => {
  const t = useApp(db);

  const publisher = (tenant: string, sub = 'publisher-1') => token({ tenant, scopes: [PUBLISH], sub });
  const reader = (tenant: string, scopes: string[] = []) => token({ tenant, scopes, sub: 'reader-1' });

  async function publish(tenant: string, doc: Record<string, unknown> = toolDocument()) {
    const res = await call(t.app, 'POST', '/v1/tools', { token: await publisher(tenant), body: doc });
    expect(res.statusCode, res.body).toBe(201);
    return res;
  }

  const notFoundBody = (name: string) => ({
    error: { code: 'not_found', message: `tool '${name}' not found`, details: [], request_id: expect.any(String) },
  });

  describe('POST /v1/tools', () => {
    it('registers a tool: 201 with the stored tool, an ETag and a Location', async () => {
      const tenant = uniqueTenant();
      const res = await publish(tenant, toolDocument({ 'x-owner': { team: 'billing' } }));
      expect(res.headers.etag).toMatch(/^"1-[0-9a-f]{16}"$/);
      expect(res.headers.location).toBe('/v1/tools/issue_refund');
      const body = res.json();
      expect(body).toMatchObject({
        name: 'issue_refund',
        version: '1.0.0',
        revision: 1,
        status: 'active',
        summary: 'Refund a paid invoice.',
        sensitivity: 'medium',
        side_effects: true,
        tags: ['billing', 'payments'],
        'x-owner': { team: 'billing' },
      });
      expect(body.parameters.required).toEqual(['invoice_id']);
      for (const format of ['openai', 'anthropic', 'mcp', 'raw']) expect(body.tokens[format]).toBeGreaterThan(10);
      expect(Date.parse(body.created_at)).not.toBeNaN();
    });

    it('derives the summary from the description when none is given', async () => {
      const res = await publish(uniqueTenant(), toolDocument({ summary: undefined, description: 'Refund a paid invoice. Partial refunds too.' }));
      expect(res.json().summary).toBe('Refund a paid invoice.');
    });

    it('returns 409 when the name exists in the tenant', async () => {
      const tenant = uniqueTenant();
      await publish(tenant);
      const res = await call(t.app, 'POST', '/v1/tools', { token: await publisher(tenant), body: toolDocument({ version: '2.0.0' }) });
      expect(res.statusCode).toBe(409);
      expect(res.json().error.code).toBe('conflict');
    });

    it('returns 409 when the name belongs to a retired tool', async () => {
      const tenant = uniqueTenant();
      await publish(tenant);
      expect((await call(t.app, 'DELETE', '/v1/tools/issue_refund', { token: await publisher(tenant) })).statusCode).toBe(200);
      const res = await call(t.app, 'POST', '/v1/tools', { token: await publisher(tenant), body: toolDocument() });
      expect(res.statusCode).toBe(409);
    });

    it('lets another tenant register the same name', async () => {
      await publish(uniqueTenant());
      await publish(uniqueTenant());
    });

    it('gives exactly one 201 when the same name is registered concurrently', async () => {
      const tenant = uniqueTenant();
      const tk = await publisher(tenant);
      const responses = await Promise.all(Array.from({ length: 4 }, () => call(t.app, 'POST', '/v1/tools', { token: tk, body: toolDocument() })));
      expect(responses.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409]);
    });

    it('is 403 without scope registry:publish, and writes nothing', async () => {
      const tenant = uniqueTenant();
      const res = await call(t.app, 'POST', '/v1/tools', { token: await reader(tenant, ['billing:admin']), body: toolDocument() });
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toMatchObject({ code: 'forbidden', message: "this operation needs scope 'registry:publish'" });
      const list = await call(t.app, 'GET', '/v1/tools', { token: await publisher(tenant) });
      expect(list.json().tools).toEqual([]);
      expect(await auditTrail(db.database, tenant)).toEqual([]);
    });

    it('is 401 without a token', async () => {
      const res = await call(t.app, 'POST', '/v1/tools', { body: toolDocument() });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
    });

    it('records the publish in the audit log with the token subject', async () => {
      const tenant = uniqueTenant();
      await publish(tenant);
      expect(await auditTrail(db.database, tenant)).toEqual([{ action: 'publish', tool: 'issue_refund', version: '1.0.0', actor: 'publisher-1' }]);
    });
  });

  describe('PUT /v1/tools/{name}', () => {
    it('publishes a new version with a higher semver: new revision, new ETag, history kept', async () => {
      const tenant = uniqueTenant();
      const first = await publish(tenant);
      const res = await call(t.app, 'PUT', '/v1/tools/issue_refund', {
        token: await publisher(tenant),
        body: toolDocument({ version: '1.1.0', description: 'Refund a paid invoice, fully or partly.' }),
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ version: '1.1.0', revision: 2, description: 'Refund a paid invoice, fully or partly.' });
      expect(res.headers.etag).toMatch(/^"2-[0-9a-f]{16}"$/);
      expect(res.headers.etag).not.toBe(first.headers.etag);
      const history = await call(t.app, 'GET', '/v1/tools/issue_refund/versions', { token: await publisher(tenant) });
      expect(history.json().versions.map((v: { version: string; revision: number }) => [v.revision, v.version])).toEqual([
        [1, '1.0.0'],
        [2, '1.1.0'],
      ]);
    });

    it('is a no-op returning the same ETag and revision when the content is identical', async () => {
      const tenant = uniqueTenant();
      const first = await publish(tenant);
      const res = await call(t.app, 'PUT', '/v1/tools/issue_refund', { token: await publisher(tenant), body: toolDocument() });
      expect(res.statusCode).toBe(200);
      expect(res.headers.etag).toBe(first.headers.etag);
      expect(res.json()).toMatchObject({ version: '1.0.0', revision: 1 });
      const history = await call(t.app, 'GET', '/v1/tools/issue_refund/versions', { token: await publisher(tenant) });
      expect(history.json().versions).toHaveLength(1);
      expect((await auditTrail(db.database, tenant)).map((a) => a.action)).toEqual(['publish']);
    });

    it('treats a reordering of object keys as identical content', async () => {
      const tenant = uniqueTenant();
      const first = await publish(tenant);
      const reordered = Object.fromEntries(Object.entries(toolDocument()).reverse());
      const res = await call(t.app, 'PUT', '/v1/tools/issue_refund', { token: await publisher(tenant), body: reordered });
      expect(res.headers.etag).toBe(first.headers.etag);
    });

    it.each([
      ['the same version', '1.0.0'],
      ['a lower version', '0.9.0'],
    ])('is 409 when the content changes under %s', async (_label, version) => {
      const tenant = uniqueTenant();
      await publish(tenant);
      const res = await call(t.app, 'PUT', '/v1/tools/issue_refund', { token: await publisher(tenant), body: toolDocument({ version, tags: ['changed'] }) });
      expect(res.statusCode).toBe(409);
      expect(res.json().error).toMatchObject({ code: 'conflict', details: [{ pointer: '/version', message: 'must be greater than 1.0.0' }] });
    });

    it('is 412 when If-Match does not match the current ETag, and changes nothing', async () => {
      const tenant = uniqueTenant();
      await publish(tenant);
      const res = await call(t.app, 'PUT', '/v1/tools/issue_refund', {
        token: await publisher(tenant),
        body: toolDocument({ version: '1.1.0' }),
        headers: { 'if-match': '"1-0000000000000000"' },
      });
      expect(res.statusCode).toBe(412);
      expect(res.json().error.code).toBe('precondition_failed');
      const current = await call(t.app, 'GET', '/v1/tools/issue_refund', { token: await publisher(tenant) });
      expect(current.json().version).toBe('1.0.0');
    });

    it('applies the update when If-Match carries the current ETag (strong, weak or *)', async () => {
      const tenant = uniqueTenant();
      const first = await publish(tenant);
      const tk = await publisher(tenant);
      const strong = await call(t.app, 'PUT', '/v1/tools/issue_refund', { token: tk, body: toolDocument({ version: '1.1.0' }), headers: { 'if-match': first.headers.etag as string } });
      expect(strong.statusCode).toBe(200);
      const weak = await call(t.app, 'PUT', '/v1/tools/issue_refund', { token: tk, body: toolDocument({ version: '1.2.0' }), headers: { 'if-match': `"x", W/${strong.headers.etag as string}` } });
      expect(weak.statusCode).toBe(200);
      const star = await call(t.app, 'PUT', '/v1/tools/issue_refund', { token: tk, body: toolDocument({ version: '1.3.0' }), headers: { 'if-match': '*' } });
      expect(star.statusCode).toBe(200);
      expect(star.json().revision).toBe(4);
    });

    it('lets exactly one of two concurrent updates with the same If-Match win', async () => {
      const tenant = uniqueTenant();
      const first = await publish(tenant);
      const tk = await publisher(tenant);
      const headers = { 'if-match': first.headers.etag as string };
      const responses = await Promise.all([
        call(t.app, 'PUT', '/v1/tools/issue_refund', { token: tk, body: toolDocument({ version: '1.1.0' }), headers }),
        call(t.app, 'PUT', '/v1/tools/issue_refund', { token: tk, body: toolDocument({ version: '1.2.0' }), headers }),
      ]);
      expect(responses.map((r) => r.statusCode).sort()).toEqual([200, 412]);
    });

    it('is 400 when the body name differs from the path', async () => {
      const tenant = uniqueTenant();
      await publish(tenant);
      const res = await call(t.app, 'PUT', '/v1/tools/issue_refund', { token: await publisher(tenant), body: toolDocument({ name: 'other_tool', version: '1.1.0' }) });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.details).toEqual([{ pointer: '/name', message: "must equal the name in the path ('issue_refund')", in: 'body' }]);
    });

    it('is 404 for a tool that does not exist', async () => {
      const res = await call(t.app, 'PUT', '/v1/tools/issue_refund', { token: await publisher(uniqueTenant()), body: toolDocument() });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual(notFoundBody('issue_refund'));
    });

    it('restores a retired tool (same content), and records the restore', async () => {
      const tenant = uniqueTenant();
      await publish(tenant);
      const tk = await publisher(tenant);
      await call(t.app, 'DELETE', '/v1/tools/issue_refund', { token: tk });
      const res = await call(t.app, 'PUT', '/v1/tools/issue_refund', { token: tk, body: toolDocument() });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ status: 'active', version: '1.0.0', revision: 3 });
      const visible = await call(t.app, 'GET', '/v1/tools/issue_refund', { token: await reader(tenant) });
      expect(visible.statusCode).toBe(200);
      expect((await auditTrail(db.database, tenant)).map((a) => a.action)).toEqual(['publish', 'retire', 'restore']);
    });

    it('is 403 without scope registry:publish', async () => {
      const tenant = uniqueTenant();
      await publish(tenant);
      const res = await call(t.app, 'PUT', '/v1/tools/issue_refund', { token: await reader(tenant), body: toolDocument({ version: '9.0.0' }) });
      expect(res.statusCode).toBe(403);
    });
  });

  describe('GET /v1/tools/{name}', () => {
    it('returns the full tool with its ETag, and 304 for a matching If-None-Match', async () => {
      const tenant = uniqueTenant();
      const created = await publish(tenant);
      const res = await call(t.app, 'GET', '/v1/tools/issue_refund', { token: await reader(tenant) });
      expect(res.statusCode).toBe(200);
      expect(res.headers.etag).toBe(created.headers.etag);
      // The publish response adds the publisher's warnings; the reader's view is the stored tool.
      const { warnings, ...stored } = created.json();
      expect(warnings).toEqual([]);
      expect(res.json()).toEqual(stored);
      const cached = await call(t.app, 'GET', '/v1/tools/issue_refund', { token: await reader(tenant), headers: { 'if-none-match': created.headers.etag as string } });
      expect(cached.statusCode).toBe(304);
      expect(cached.body).toBe('');
    });

    it("is 404 for another tenant's tool, with the body of a missing tool", async () => {
      await publish(uniqueTenant(), toolDocument({ name: 'secret_tool' }));
      const foreign = await call(t.app, 'GET', '/v1/tools/secret_tool', { token: await publisher(uniqueTenant()) });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual(notFoundBody('secret_tool'));
    });

    it('is 404 when the caller lacks one of the scopes, exactly like a missing tool', async () => {
      const tenant = uniqueTenant();
      await publish(tenant, toolDocument({ name: 'admin_refund', required_scopes: ['billing:admin', 'billing:write'], sensitivity: 'high' }));
      const partial = await call(t.app, 'GET', '/v1/tools/admin_refund', { token: await reader(tenant, ['billing:admin']) });
      const missing = await call(t.app, 'GET', '/v1/tools/admin_refunds', { token: await reader(tenant, ['billing:admin']) });
      expect(partial.statusCode).toBe(404);
      expect(partial.json()).toEqual(notFoundBody('admin_refund'));
      expect(missing.json()).toEqual(notFoundBody('admin_refunds'));
      expect(Object.keys(partial.headers).sort()).toEqual(Object.keys(missing.headers).sort());

      const allowed = await call(t.app, 'GET', '/v1/tools/admin_refund', { token: await reader(tenant, ['billing:admin', 'billing:write', 'other']) });
      expect(allowed.statusCode).toBe(200);
      expect(allowed.json().required_scopes).toEqual(['billing:admin', 'billing:write']);
    });

    it('shows a retired tool to publishers only', async () => {
      const tenant = uniqueTenant();
      await publish(tenant);
      await call(t.app, 'DELETE', '/v1/tools/issue_refund', { token: await publisher(tenant) });
      const asReader = await call(t.app, 'GET', '/v1/tools/issue_refund', { token: await reader(tenant) });
      expect(asReader.statusCode).toBe(404);
      expect(asReader.json()).toEqual(notFoundBody('issue_refund'));
      const asPublisher = await call(t.app, 'GET', '/v1/tools/issue_refund', { token: await publisher(tenant) });
      expect(asPublisher.statusCode).toBe(200);
      expect(asPublisher.json().status).toBe('retired');
    });

    it('shows publishers a tool whose usage scopes they do not hold', async () => {
      const tenant = uniqueTenant();
      await publish(tenant, toolDocument({ required_scopes: ['billing:admin'] }));
      const res = await call(t.app, 'GET', '/v1/tools/issue_refund', { token: await publisher(tenant) });
      expect(res.statusCode).toBe(200);
    });

    it('is 400 for a name that cannot be a tool name', async () => {
      const res = await call(t.app, 'GET', '/v1/tools/1nvalid%20name', { token: await reader(uniqueTenant()) });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.details[0]).toMatchObject({ pointer: '/name', in: 'params' });
    });
  });

  describe('GET /v1/tools', () => {
    const names = ['alpha', 'bravo', 'charlie', 'delta', 'echo'];

    async function publishMany(tenant: string) {
      for (const name of names) await publish(tenant, toolDocument({ name, version: '1.0.0' }));
    }

    it('returns cards (no schemas) ordered by name', async () => {
      const tenant = uniqueTenant();
      await publishMany(tenant);
      const res = await call(t.app, 'GET', '/v1/tools', { token: await reader(tenant) });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body.tools.map((c: { name: string }) => c.name)).toEqual(names);
      expect(body.next_cursor).toBeNull();
      expect(body.tools[0]).not.toHaveProperty('parameters');
      expect(body.tools[0]).not.toHaveProperty('description');
      expect(body.tools[0]).toMatchObject({ summary: 'Refund a paid invoice.', category: 'billing', status: 'active' });
      expect(body.tools[0].tokens.openai).toBeGreaterThan(0);
    });

    it('paginates with limit and cursor; next_cursor is null on the last page', async () => {
      const tenant = uniqueTenant();
      await publishMany(tenant);
      const tk = await reader(tenant);
      const pages: string[][] = [];
      let cursor: string | null = null;
      do {
        const query: string = cursor === null ? '?limit=2' : `?limit=2&cursor=${encodeURIComponent(cursor)}`;
        const res = await call(t.app, 'GET', `/v1/tools${query}`, { token: tk });
        expect(res.statusCode).toBe(200);
        pages.push(res.json().tools.map((c: { name: string }) => c.name));
        cursor = res.json().next_cursor;
      } while (cursor !== null && pages.length < 10);
      expect(pages).toEqual([['alpha', 'bravo'], ['charlie', 'delta'], ['echo']]);
    });

    it('returns next_cursor null when the last page is exactly full', async () => {
      const tenant = uniqueTenant();
      await publishMany(tenant);
      const res = await call(t.app, 'GET', '/v1/tools?limit=5', { token: await reader(tenant) });
      expect(res.json().tools).toHaveLength(5);
      expect(res.json().next_cursor).toBeNull();
    });

    it.each(['not-base64!', Buffer.from('9 not a name').toString('base64url'), 'x'.repeat(201)])('is 400 for a bad cursor (%#)', async (cursor) => {
      const res = await call(t.app, 'GET', `/v1/tools?cursor=${encodeURIComponent(cursor)}`, { token: await reader(uniqueTenant()) });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'validation_failed', details: [{ pointer: '/cursor', in: 'querystring' }] });
    });

    it.each(['0', '201', 'ten'])('is 400 for limit=%s', async (limit) => {
      const res = await call(t.app, 'GET', `/v1/tools?limit=${limit}`, { token: await reader(uniqueTenant()) });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.details[0]).toMatchObject({ pointer: '/limit', in: 'querystring' });
    });

    it('lists only the tools whose scopes the caller holds; publishers see all', async () => {
      const tenant = uniqueTenant();
      await publish(tenant, toolDocument({ name: 'open_tool' }));
      await publish(tenant, toolDocument({ name: 'read_tool', required_scopes: ['billing:read'] }));
      await publish(tenant, toolDocument({ name: 'admin_tool', required_scopes: ['billing:admin', 'billing:read'], sensitivity: 'high' }));
      const namesFor = async (tk: string) => (await call(t.app, 'GET', '/v1/tools', { token: tk })).json().tools.map((c: { name: string }) => c.name);
      expect(await namesFor(await reader(tenant))).toEqual(['open_tool']);
      expect(await namesFor(await reader(tenant, ['billing:read']))).toEqual(['open_tool', 'read_tool']);
      expect(await namesFor(await reader(tenant, ['billing:admin']))).toEqual(['open_tool']);
      expect(await namesFor(await reader(tenant, ['billing:admin', 'billing:read']))).toEqual(['admin_tool', 'open_tool', 'read_tool']);
      expect(await namesFor(await publisher(tenant))).toEqual(['admin_tool', 'open_tool', 'read_tool']);
    });

    it('never lists another tenant\'s tools, whatever the query string says', async () => {
      const owner = uniqueTenant();
      await publish(owner, toolDocument({ name: 'owned_tool' }));
      const res = await call(t.app, 'GET', `/v1/tools?tenant_id=${owner}&tenant=${owner}`, { token: await publisher(uniqueTenant()) });
      expect(res.statusCode).toBe(200);
      expect(res.json().tools).toEqual([]);
    });

    it('shows retired tools to publishers only when include_retired=true', async () => {
      const tenant = uniqueTenant();
      await publish(tenant, toolDocument({ name: 'kept' }));
      await publish(tenant, toolDocument({ name: 'gone' }));
      await call(t.app, 'DELETE', '/v1/tools/gone', { token: await publisher(tenant) });
      const list = async (tk: string, query = '') => (await call(t.app, 'GET', `/v1/tools${query}`, { token: tk })).json().tools.map((c: { name: string; status: string }) => `${c.name}:${c.status}`);
      expect(await list(await publisher(tenant))).toEqual(['kept:active']);
      expect(await list(await publisher(tenant), '?include_retired=true')).toEqual(['gone:retired', 'kept:active']);
      expect(await list(await reader(tenant), '?include_retired=true')).toEqual(['kept:active']);
    });

    it('filters by category and by tags (any of the comma-separated tags)', async () => {
      const tenant = uniqueTenant();
      await publish(tenant, toolDocument({ name: 'refund', category: 'billing', tags: ['money', 'refunds'] }));
      await publish(tenant, toolDocument({ name: 'invoice', category: 'billing', tags: ['money'] }));
      await publish(tenant, toolDocument({ name: 'weather', category: 'travel', tags: ['forecast'] }));
      await publish(tenant, toolDocument({ name: 'untagged', category: undefined, tags: undefined }));
      const list = async (query: string) => (await call(t.app, 'GET', `/v1/tools${query}`, { token: await reader(tenant) })).json().tools.map((c: { name: string }) => c.name);
      expect(await list('?category=billing')).toEqual(['invoice', 'refund']);
      expect(await list('?category=nothing')).toEqual([]);
      expect(await list('?tags=refunds')).toEqual(['refund']);
      expect(await list('?tags=refunds,forecast')).toEqual(['refund', 'weather']);
      expect(await list('?tags=money&category=billing&limit=1')).toEqual(['invoice']);
    });
  });

  describe('DELETE /v1/tools/{name}', () => {
    it('retires the tool: 200, new ETag, hidden from readers, history and audit kept', async () => {
      const tenant = uniqueTenant();
      const created = await publish(tenant);
      await call(t.app, 'PUT', '/v1/tools/issue_refund', { token: await publisher(tenant), body: toolDocument({ version: '1.1.0' }) });
      const res = await call(t.app, 'DELETE', '/v1/tools/issue_refund', { token: await publisher(tenant, 'retirer') });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ status: 'retired', version: '1.1.0', revision: 3 });
      expect(res.headers.etag).toMatch(/^"3-[0-9a-f]{16}-r"$/);
      expect(res.headers.etag).not.toBe(created.headers.etag);

      const listed = await call(t.app, 'GET', '/v1/tools', { token: await reader(tenant) });
      expect(listed.json().tools).toEqual([]);
      const history = await call(t.app, 'GET', '/v1/tools/issue_refund/versions', { token: await publisher(tenant) });
      expect(history.statusCode).toBe(200);
      expect(history.json().versions.map((v: { version: string }) => v.version)).toEqual(['1.0.0', '1.1.0']);
      expect(history.json().versions[0].document).toMatchObject({ name: 'issue_refund', version: '1.0.0' });
      expect(await auditTrail(db.database, tenant)).toEqual([
        { action: 'publish', tool: 'issue_refund', version: '1.0.0', actor: 'publisher-1' },
        { action: 'publish', tool: 'issue_refund', version: '1.1.0', actor: 'publisher-1' },
        { action: 'retire', tool: 'issue_refund', version: '1.1.0', actor: 'retirer' },
      ]);
    });

    it('is idempotent: retiring a retired tool changes nothing', async () => {
      const tenant = uniqueTenant();
      await publish(tenant);
      const tk = await publisher(tenant);
      const first = await call(t.app, 'DELETE', '/v1/tools/issue_refund', { token: tk });
      const second = await call(t.app, 'DELETE', '/v1/tools/issue_refund', { token: tk });
      expect(second.statusCode).toBe(200);
      expect(second.headers.etag).toBe(first.headers.etag);
      expect((await auditTrail(db.database, tenant)).map((a) => a.action)).toEqual(['publish', 'retire']);
    });

    it('is 412 on an If-Match mismatch, 404 for a missing tool, 403 without registry:publish', async () => {
      const tenant = uniqueTenant();
      await publish(tenant);
      const mismatch = await call(t.app, 'DELETE', '/v1/tools/issue_refund', { token: await publisher(tenant), headers: { 'if-match': '"7-abc"' } });
      expect(mismatch.statusCode).toBe(412);
      const missing = await call(t.app, 'DELETE', '/v1/tools/no_such_tool', { token: await publisher(tenant) });
      expect(missing.statusCode).toBe(404);
      const forbidden = await call(t.app, 'DELETE', '/v1/tools/issue_refund', { token: await reader(tenant, ['billing:admin']) });
      expect(forbidden.statusCode).toBe(403);
      const still = await call(t.app, 'GET', '/v1/tools/issue_refund', { token: await reader(tenant) });
      expect(still.json().status).toBe('active');
    });
  });

  describe('GET /v1/tools/{name}/versions', () => {
    it('is 403 for readers and 404 for another tenant', async () => {
      const tenant = uniqueTenant();
      await publish(tenant);
      expect((await call(t.app, 'GET', '/v1/tools/issue_refund/versions', { token: await reader(tenant) })).statusCode).toBe(403);
      const foreign = await call(t.app, 'GET', '/v1/tools/issue_refund/versions', { token: await publisher(uniqueTenant()) });
      expect(foreign.statusCode).toBe(404);
    });
  });

  describe('cross-tenant writes', () => {
    it("cannot update or retire another tenant's tool: 404, and the owner's tool is untouched", async () => {
      const owner = uniqueTenant();
      const created = await publish(owner);
      const intruder = await publisher(uniqueTenant());
      const put = await call(t.app, 'PUT', '/v1/tools/issue_refund', { token: intruder, body: toolDocument({ version: '6.6.6' }), headers: { 'if-match': '*' } });
      expect(put.statusCode).toBe(404);
      const del = await call(t.app, 'DELETE', '/v1/tools/issue_refund', { token: intruder });
      expect(del.statusCode).toBe(404);
      const mine = await call(t.app, 'GET', '/v1/tools/issue_refund', { token: await publisher(owner) });
      expect(mine.headers.etag).toBe(created.headers.etag);
      expect(mine.json().status).toBe('active');
    });

    it('takes the tenant from the token, never from the body', async () => {
      const tenant = uniqueTenant();
      const res = await call(t.app, 'POST', '/v1/tools', { token: await publisher(tenant), body: { ...toolDocument(), tenant_id: 'victim' } });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.details).toContainEqual({ pointer: '/tenant_id', message: 'must NOT have additional properties', in: 'body' });
    });
  });
});
