import { describe, expect, expectTypeOf, it } from 'vitest';

import { type DiscoverResponse, type ObjectSchema, RegistryClient, RegistryError, type ToolDocument, type ToolView } from '../../clients/typescript/src/index.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, uniqueTenant } from '../helpers/tokens.js';
import { useLiveRegistry } from './live-registry.js';

const refund = () => toolDocument() as unknown as ToolDocument;

/** Real HTTP: the SDK against the app listening on 127.0.0.1, on every database leg. */
forEachDatabase((db) => {
  const registry = useLiveRegistry(() => db.database);

  describe('RegistryClient: tools', () => {
    it('creates, reads, lists and retires a tool with typed results and ETags', async () => {
      const client = await registry.client(uniqueTenant());
      const created = await client.createTool(refund());
      expect(created.tool).toMatchObject({ name: 'issue_refund', version: '1.0.0', revision: 1, status: 'active' });
      expect(created.etag).toMatch(/^"1-/);
      expectTypeOf(created.tool).toEqualTypeOf<ToolView>();

      const read = await client.getTool('issue_refund');
      expect(read.etag).toBe(created.etag);
      expect(read.tool.parameters).toMatchObject({ required: ['invoice_id'] });
      expect(read.tool.tokens.openai).toBeGreaterThan(0);

      await client.createTool(toolDocument({ name: 'get_invoice', side_effects: false }) as unknown as ToolDocument);
      const page = await client.listTools({ limit: 1 });
      expect(page.tools.map((t) => t.name)).toEqual(['get_invoice']);
      expect(page.next_cursor).not.toBeNull();
      const all: string[] = [];
      for await (const card of client.iterateTools({ limit: 1 })) all.push(card.name);
      expect(all).toEqual(['get_invoice', 'issue_refund']);

      const retired = await client.retireTool('issue_refund', { ifMatch: read.etag });
      expect(retired.tool.status).toBe('retired');
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['get_invoice']);
    });

    it('treats an identical PUT as a no-op and publishes a changed one as a new version', async () => {
      const client = await registry.client(uniqueTenant());
      const { etag } = await client.createTool(refund());
      const same = await client.updateTool('issue_refund', refund(), { ifMatch: etag });
      expect(same.tool.revision).toBe(1);
      const changed = await client.updateTool('issue_refund', { ...refund(), version: '1.1.0', description: 'Refund a paid invoice, fully or partly.' }, { ifMatch: etag });
      expect(changed.tool).toMatchObject({ version: '1.1.0', revision: 2 });
      expect((await client.listVersions('issue_refund')).map((v) => v.version)).toEqual(['1.0.0', '1.1.0']);
    });

    it('raises RegistryError with status, code, details and request id', async () => {
      const client = await registry.client(uniqueTenant());
      const notFound = await client.getTool('nope').catch((e: unknown) => e);
      expect(notFound).toBeInstanceOf(RegistryError);
      expect(notFound).toMatchObject({ status: 404, code: 'not_found', details: [] });
      expect((notFound as RegistryError).request_id).toMatch(/.+/);
      expect(await client.findTool('nope')).toBeUndefined();

      const invalid = await client.createTool({ ...refund(), sensitivity: 'high', required_scopes: [] }).catch((e: unknown) => e);
      expect(invalid).toMatchObject({ status: 400, code: 'validation_failed' });
      expect((invalid as RegistryError).details).toContainEqual(expect.objectContaining({ pointer: '/required_scopes' }));

      const { etag } = await client.createTool(refund());
      await expect(client.createTool(refund())).rejects.toMatchObject({ status: 409, code: 'conflict' });
      const stale = { ...refund(), version: '2.0.0', description: 'Changed.' };
      await expect(client.updateTool('issue_refund', stale, { ifMatch: '"999-stale"' })).rejects.toMatchObject({ status: 412, code: 'precondition_failed' });
      await expect(client.updateTool('issue_refund', stale, { ifMatch: etag })).resolves.toMatchObject({ tool: { version: '2.0.0' } });
    });

    it('reports 401 without a valid token and 403 without the publish scope', async () => {
      const anonymous = new RegistryClient({ baseUrl: registry.url, retry: { retries: 0 } });
      await expect(anonymous.listTools()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
      const reader = await registry.client(uniqueTenant(), ['billing:read']);
      await expect(reader.createTool(refund())).rejects.toMatchObject({ status: 403, code: 'forbidden' });
    });

    it('sends a fresh token from a token function on every request', async () => {
      const tenant = uniqueTenant();
      let calls = 0;
      const client = new RegistryClient({ baseUrl: registry.url, token: async () => (calls++, registry.token(tenant)) });
      await client.listTools();
      await client.listTools();
      expect(calls).toBe(2);
    });
  });

  describe('RegistryClient: discovery, authorize and audit', () => {
    it('discovers, authorizes (allow and deny) and reads the audit trail', async () => {
      const tenant = uniqueTenant();
      const client = await registry.client(tenant);
      await client.createTool(refund());
      const result = await client.discover({ query: 'refund invoice 1024', top_k: 2, format: 'anthropic' });
      expectTypeOf(result).toEqualTypeOf<DiscoverResponse<'anthropic'>>();
      expectTypeOf(result.tools[0]!.schema.input_schema).toEqualTypeOf<ObjectSchema>();
      expect(result.tools[0]).toMatchObject({ name: 'issue_refund', schema: { name: 'issue_refund', input_schema: expect.any(Object) } });
      expect(result.search_mode).toBe('lexical');
      expect((await client.discover('refund invoice')).tools[0]?.name).toBe('issue_refund');

      const allow = await client.authorize({ tool: 'issue_refund', arguments: { invoice_id: 'INV-1' }, discovery_id: result.discovery_id });
      expect(allow).toEqual({ decision: 'allow', reasons: [], tool: { name: 'issue_refund', version: '1.0.0' } });
      const deny = await client.authorize({ tool: 'issue_refund', arguments: { amount: 'ten' } });
      expect(deny.decision).toBe('deny');
      expect(deny.reasons.map((r) => r.code)).toContain('invalid_arguments');

      const discoveries = await client.listDiscoveries({ limit: 5 });
      expect(discoveries.map((d) => d.query)).toContain('refund invoice 1024');
      const allDiscoveries = [];
      for await (const discovery of client.iterateDiscoveries({ limit: 1 })) allDiscoveries.push(discovery.query);
      expect(allDiscoveries).toEqual(discoveries.map((d) => d.query));

      const audit = await client.audit({ limit: 2 });
      expect(audit.entries).toHaveLength(2);
      expect(audit.entries[0]).toMatchObject({ action: 'authorize', decision: 'deny', tool: { name: 'issue_refund' } });
      const everything = [];
      for await (const entry of client.iterateAudit({ limit: 1 })) everything.push(entry.action);
      expect(everything).toEqual(['authorize', 'authorize', 'publish']);
    });

    it('asks for OpenAI strict schemas, and a strict call with null for an optional property authorizes', async () => {
      const client = await registry.client(uniqueTenant());
      await client.createTool(refund());
      const result = await client.discover({ query: 'refund invoice 1024', format: 'openai', strict: true });
      const fn = result.tools[0]!.schema.function;
      expect(fn).toMatchObject({ name: 'issue_refund', strict: true, parameters: { additionalProperties: false, required: expect.arrayContaining(['invoice_id', 'amount']) } });
      expect(result.tools[0]!.strict_fallback).toBeUndefined();
      const allow = await client.authorize({ tool: 'issue_refund', arguments: { invoice_id: 'INV-1', amount: null } });
      expect(allow.decision).toBe('allow');
      // @ts-expect-error strict is typed for the OpenAI formats only; the service refuses it too
      const refused = await client.discover({ query: 'refund', format: 'anthropic', strict: true }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ status: 400, code: 'validation_failed', details: [expect.objectContaining({ pointer: '/strict' })] });
    });

    it('rejects a malformed discover request with the offending field', async () => {
      const client = await registry.client(uniqueTenant(), [PUBLISH]);
      const error = await client.discover({ query: 'x', top_k: 50 }).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 400, code: 'validation_failed' });
      expect((error as RegistryError).details[0]?.pointer).toBe('/top_k');
    });

    it('reads health and readiness', async () => {
      const client = new RegistryClient({ baseUrl: registry.url });
      expect(await client.health()).toEqual({ status: 'ok' });
      expect(await client.ready()).toMatchObject({ ready: true, status: 'ready' });
    });
  });
});
