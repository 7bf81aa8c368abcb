import type { FastifyInstance } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';

import { buildApp } from '../../src/app.js';
import { call, testConfig, testDependencies, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

interface SyncResult {
  source: string;
  dry_run: boolean;
  created: string[];
  updated: string[];
  unchanged: string[];
  retired: string[];
  errors: { name: string; error: string; details: { pointer: string; message: string }[] }[];
}

const tool = (name: string, overrides: Record<string, unknown> = {}) => toolDocument({ name, ...overrides });

/**
 * POST /v1/catalog/sync on every database leg (real SQL, the app through inject): a source's tools
 * created, left alone, versioned and pruned; other sources, unsourced tools and other tenants
 * untouched; dry runs store nothing; bad bodies are 400s naming the field.
 */
forEachDatabase((db) => {
  describe('POST /v1/catalog/sync', () => {
    const ctx = useApp(db);
    const tenant = uniqueTenant('sync');
    let publisher: string;
    let reader: string;

    beforeAll(async () => {
      publisher = await token({ tenant, scopes: [PUBLISH], sub: 'ci' });
      reader = await token({ tenant, scopes: [], sub: 'agent' });
    });

    const sync = async (body: Record<string, unknown>, tokenValue = publisher) => call(ctx.app, 'POST', '/v1/catalog/sync', { token: tokenValue, body });
    const synced = async (body: Record<string, unknown>, tokenValue = publisher): Promise<SyncResult> => {
      const response = await sync(body, tokenValue);
      expect(response.statusCode, response.body).toBe(200);
      return response.json<SyncResult>();
    };
    const get = async (name: string, tokenValue = publisher) => call(ctx.app, 'GET', `/v1/tools/${name}`, { token: tokenValue });

    it('creates every declared tool, stamped with its source', async () => {
      const result = await synced({ source: 'billing-svc', tools: [tool('refund_invoice'), tool('void_invoice')] });
      expect(result).toEqual({ source: 'billing-svc', dry_run: false, created: ['refund_invoice', 'void_invoice'], updated: [], unchanged: [], retired: [], errors: [] });
      const stored = await get('refund_invoice');
      expect(stored.statusCode).toBe(200);
      expect(stored.json()).toMatchObject({ name: 'refund_invoice', version: '1.0.0', status: 'active', source: 'billing-svc', revision: 1 });
    });

    it('leaves unchanged documents alone: no new revision, same ETag', async () => {
      const before = await get('refund_invoice');
      const result = await synced({ source: 'billing-svc', tools: [tool('refund_invoice'), tool('void_invoice')] });
      expect(result.unchanged).toEqual(['refund_invoice', 'void_invoice']);
      expect([...result.created, ...result.updated, ...result.retired, ...result.errors]).toEqual([]);
      const after = await get('refund_invoice');
      expect(after.headers.etag).toBe(before.headers.etag);
      expect(after.json().revision).toBe(1);
    });

    it('publishes a changed document as its new version through the publish rules', async () => {
      const result = await synced({
        source: 'billing-svc',
        tools: [tool('refund_invoice', { version: '1.1.0', summary: 'Refund a paid invoice, fully or partly.' }), tool('void_invoice')],
      });
      expect(result.updated).toEqual(['refund_invoice']);
      expect(result.unchanged).toEqual(['void_invoice']);
      const stored = (await get('refund_invoice')).json();
      expect(stored).toMatchObject({ version: '1.1.0', revision: 2, summary: 'Refund a paid invoice, fully or partly.', source: 'billing-svc' });
      const history = await call(ctx.app, 'GET', '/v1/tools/refund_invoice/versions', { token: publisher });
      expect(history.json().versions.map((v: { version: string }) => v.version)).toEqual(['1.0.0', '1.1.0']);
    });

    it('reports a refused tool under its name and still syncs the others', async () => {
      const result = await synced({
        source: 'billing-svc',
        tools: [
          // Changed content without a higher version: the version rule of PUT refuses it.
          tool('refund_invoice', { version: '1.1.0', summary: 'Another summary.' }),
          tool('void_invoice'),
          tool('broken_tool', { parameters: { type: 'object', properties: { when: { type: 'strin' } } } }),
          tool('credit_note'),
        ],
      });
      expect(result.created).toEqual(['credit_note']);
      expect(result.unchanged).toEqual(['void_invoice']);
      expect(result.errors.map((e) => e.name)).toEqual(['refund_invoice', 'broken_tool']);
      expect(result.errors[0]!.details).toContainEqual(expect.objectContaining({ pointer: '/version' }));
      expect(result.errors[1]!.details.some((d) => d.pointer.startsWith('/parameters/properties/when'))).toBe(true);
      expect((await get('refund_invoice')).json().version).toBe('1.1.0');
      expect((await get('broken_tool')).statusCode).toBe(404);
    });

    it('prunes only the source\'s own active tools absent from the body', async () => {
      await synced({ source: 'crm-svc', tools: [tool('crm_lookup')] });
      const manual = await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: tool('manual_tool') });
      expect(manual.statusCode).toBe(201);
      const result = await synced({ source: 'billing-svc', tools: [tool('void_invoice')], prune: true });
      expect(result.retired).toEqual(['credit_note', 'refund_invoice']);
      expect(result.unchanged).toEqual(['void_invoice']);
      expect((await get('refund_invoice')).json().status).toBe('retired');
      expect((await get('crm_lookup')).json()).toMatchObject({ status: 'active', source: 'crm-svc' });
      expect((await get('manual_tool')).json()).toMatchObject({ status: 'active', source: null });
      // Retired tools leave what callers see.
      expect((await get('refund_invoice', reader)).statusCode).toBe(404);
    });

    it('never touches another source\'s tool, even when named', async () => {
      const result = await synced({ source: 'billing-svc', tools: [tool('void_invoice'), tool('crm_lookup', { version: '2.0.0', summary: 'Taken over.' })] });
      expect(result.errors).toEqual([
        { name: 'crm_lookup', error: "tool 'crm_lookup' belongs to source 'crm-svc'; it was left alone", details: [expect.objectContaining({ pointer: '/name' })] },
      ]);
      expect((await get('crm_lookup')).json()).toMatchObject({ version: '1.0.0', source: 'crm-svc' });
    });

    it('adopts a tool published tool by tool when it declares it, and restores a retired one', async () => {
      const result = await synced({ source: 'billing-svc', tools: [tool('void_invoice'), tool('manual_tool'), tool('refund_invoice', { version: '1.1.0', summary: 'Refund a paid invoice, fully or partly.' })] });
      expect(result.unchanged).toEqual(['void_invoice', 'manual_tool']);
      expect(result.created).toEqual(['refund_invoice']);
      expect((await get('manual_tool')).json()).toMatchObject({ source: 'billing-svc', revision: 1 });
      expect((await get('refund_invoice')).json()).toMatchObject({ status: 'active', version: '1.1.0' });
    });

    it('writes nothing on a dry run and answers the plan', async () => {
      const before = await Promise.all(['void_invoice', 'manual_tool', 'refund_invoice'].map(async (name) => (await get(name)).headers.etag));
      const result = await synced({
        source: 'billing-svc',
        dry_run: true,
        prune: true,
        tools: [tool('void_invoice', { version: '1.0.1', summary: 'Void an invoice.' }), tool('brand_new'), tool('manual_tool')],
      });
      expect(result).toMatchObject({ dry_run: true, created: ['brand_new'], updated: ['void_invoice'], unchanged: ['manual_tool'], retired: ['refund_invoice'], errors: [] });
      expect((await get('brand_new')).statusCode).toBe(404);
      const after = await Promise.all(['void_invoice', 'manual_tool', 'refund_invoice'].map(async (name) => (await get(name)).headers.etag));
      expect(after).toEqual(before);
      expect((await get('refund_invoice')).json().status).toBe('active');
    });

    it('keeps tenants apart: the same source and names in another tenant are another catalog', async () => {
      const other = await token({ tenant: uniqueTenant('sync-other'), scopes: [PUBLISH], sub: 'ci' });
      const result = await synced({ source: 'billing-svc', tools: [tool('void_invoice', { version: '9.0.0' })], prune: true }, other);
      expect(result).toMatchObject({ created: ['void_invoice'], retired: [], errors: [] });
      expect((await get('void_invoice')).json().version).toBe('1.0.0');
      expect((await get('refund_invoice')).json().status).toBe('active');
      expect((await get('refund_invoice', other)).statusCode).toBe(404);
    });

    it('needs registry:publish and a token', async () => {
      expect((await sync({ source: 'billing-svc', tools: [] }, reader)).statusCode).toBe(403);
      expect((await call(ctx.app, 'POST', '/v1/catalog/sync', { body: { source: 'billing-svc', tools: [] } })).statusCode).toBe(401);
    });

    it.each([
      ['a missing source', { tools: [] }, '/source'],
      ['a malformed source', { source: ' spaces ', tools: [] }, '/source'],
      ['a reserved upstream source', { source: 'upstream:github', tools: [] }, '/source'],
      ['tools that are not a list', { source: 's', tools: tool('x') }, '/tools'],
      ['a tool without a valid name', { source: 's', tools: [tool('ok_tool'), tool('9-bad')] }, '/tools/1/name'],
      ['a name declared twice', { source: 's', tools: [tool('twice'), tool('other'), tool('twice')] }, '/tools/2/name'],
      ['a string for prune', { source: 's', tools: [], prune: 'yes' }, '/prune'],
      ['an unknown field', { source: 's', tools: [], purge: true }, '/purge'],
    ])('answers 400 naming the field for %s', async (_title, body, pointer) => {
      const response = await sync(body);
      expect(response.statusCode, response.body).toBe(400);
      const error = response.json().error;
      expect(error.code).toBe('validation_failed');
      expect(error.details.map((d: { pointer: string }) => d.pointer)).toContain(pointer);
    });

    it('reports the index progress of the source (no embedder: everything is searchable at once)', async () => {
      const response = await call(ctx.app, 'GET', '/v1/catalog/index-status?source=billing-svc', { token: publisher });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ model: null, active: 3, indexed: 3, pending: 0, failed: 0, eta_seconds: 0 });
    });
  });

  describe('catalog sync limits and indexing', () => {
    const tight = useApp(db, { CATALOG_SYNC_MAX_BYTES: '4096', BODY_LIMIT_BYTES: '2048' });
    const tenant = uniqueTenant('sync-limits');
    let publisher: string;
    let app: FastifyInstance | undefined;

    beforeAll(async () => {
      publisher = await token({ tenant, scopes: [PUBLISH], sub: 'ci' });
    });

    it('refuses a body past CATALOG_SYNC_MAX_BYTES with 413', async () => {
      const tools = Array.from({ length: 6 }, (_, i) => tool(`tool_${i}`));
      const response = await call(tight.app, 'POST', '/v1/catalog/sync', { token: publisher, body: { source: 's', tools } });
      expect(response.statusCode).toBe(413);
      expect(response.json().error.code).toBe('payload_too_large');
    });

    it('reports a single tool past BODY_LIMIT_BYTES under its name', async () => {
      const big = tool('big_tool', { examples: Array.from({ length: 40 }, (_, i) => `Refund invoice #${i} because the item arrived broken`) });
      const response = await call(tight.app, 'POST', '/v1/catalog/sync', { token: publisher, body: { source: 's', tools: [big] } });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json().errors).toEqual([{ name: 'big_tool', error: expect.stringContaining('BODY_LIMIT_BYTES'), details: [] }]);
    });

    it('counts the synced tools until the indexer has stored their vectors', async () => {
      const embedder = new HashingEmbedder();
      app = await buildApp({ ...testDependencies(testConfig(), db.database), embedder });
      await app.ready();
      try {
        const synced = await call(app, 'POST', '/v1/catalog/sync', { token: publisher, body: { source: 'indexed-svc', tools: [tool('alpha_tool'), tool('beta_tool')] } });
        expect(synced.json().created).toEqual(['alpha_tool', 'beta_tool']);
        await app.indexer!.flush();
        const status = await call(app, 'GET', '/v1/catalog/index-status?source=indexed-svc', { token: publisher });
        expect(status.json()).toMatchObject({ model: embedder.model, active: 2, indexed: 2, pending: 0, failed: 0, eta_seconds: 0 });
        expect(status.json().tools_per_second).toBeGreaterThan(0);
        const metrics = await app.inject({ method: 'GET', url: '/metrics' });
        expect(metrics.body).toMatch(/tool_registry_index_backlog_tools\{state="pending"\} 0/);
        expect(metrics.body).toMatch(/tool_registry_index_tools_total [1-9]/);
        const ready = await app.inject({ method: 'GET', url: '/readyz' });
        expect(ready.json().checks.index_backlog).toBe('ok');
        expect(ready.json().index).toMatchObject({ pending: 0, failed: 0 });
      } finally {
        await app.close();
      }
    });
  });
});
