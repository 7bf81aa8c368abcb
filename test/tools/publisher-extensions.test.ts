import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';

import { FORMATS } from '../../src/tools/formats.js';
import { TokenCostBackfill } from '../../src/tools/token-backfill.js';
import { useDiscoveryApp } from '../discovery/helpers.js';
import { call, useApp } from '../helpers/app.js';
import { auditTrail } from '../helpers/audit.js';
import { forEachDatabase } from '../helpers/databases.js';
import { FlakyEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

interface Detail {
  pointer: string;
  message: string;
}

/**
 * The 2026-12-01 publisher extensions through HTTP on every database leg: dry runs of POST and PUT
 * (every check, nothing stored), unknown JSON Schema keywords refused with their pointer,
 * index_status in the publisher's view, and stored token costs re-priced for the current formats.
 */
forEachDatabase((db) => {
  const t = useApp(db);
  const publisher = (tenant: string) => token({ tenant, scopes: [PUBLISH], sub: 'publisher-1' });

  describe('POST /v1/tools?dry_run=true', () => {
    it('answers 200 with what would be created, and stores nothing (no tool, no audit entry)', async () => {
      const tenant = uniqueTenant();
      const pub = await publisher(tenant);
      const res = await call(t.app, 'POST', '/v1/tools?dry_run=true', { token: pub, body: toolDocument() });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers.etag).toBeUndefined();
      expect(res.json()).toMatchObject({ dry_run: true, outcome: 'created', changes: [], etag: expect.stringMatching(/^"1-/), tool: { name: 'issue_refund', version: '1.0.0', revision: 1, status: 'active' } });
      expect(res.json().tool.tokens).toHaveProperty('gemini');
      expect((await call(t.app, 'GET', '/v1/tools/issue_refund', { token: pub })).statusCode).toBe(404);
      expect(await auditTrail(db.database, tenant)).toEqual([]);
      // The real call still succeeds: the dry run took nothing.
      expect((await call(t.app, 'POST', '/v1/tools', { token: pub, body: toolDocument() })).statusCode).toBe(201);
    });

    it('gives the real call\'s 409 for a taken name, 400 with pointers for an invalid document, 403 without the scope', async () => {
      const tenant = uniqueTenant();
      const pub = await publisher(tenant);
      expect((await call(t.app, 'POST', '/v1/tools', { token: pub, body: toolDocument() })).statusCode).toBe(201);
      const taken = await call(t.app, 'POST', '/v1/tools?dry_run=true', { token: pub, body: toolDocument() });
      expect(taken.statusCode).toBe(409);
      expect(taken.json().error.code).toBe('conflict');
      const invalid = await call(t.app, 'POST', '/v1/tools?dry_run=true', { token: pub, body: toolDocument({ name: 'other', version: 'one' }) });
      expect(invalid.statusCode).toBe(400);
      expect(invalid.json().error.details.map((d: Detail) => d.pointer)).toEqual(['/version']);
      const reader = await token({ tenant, scopes: [] });
      expect((await call(t.app, 'POST', '/v1/tools?dry_run=true', { token: reader, body: toolDocument({ name: 'other' }) })).statusCode).toBe(403);
      expect((await call(t.app, 'POST', '/v1/tools?dry_run=maybe', { token: pub, body: toolDocument({ name: 'other' }) })).statusCode).toBe(400);
    });
  });

  describe('PUT /v1/tools/{name}?dry_run=true', () => {
    async function published(tenant: string) {
      const pub = await publisher(tenant);
      const res = await call(t.app, 'POST', '/v1/tools', { token: pub, body: toolDocument() });
      expect(res.statusCode).toBe(201);
      return { pub, etag: res.headers.etag as string };
    }

    it('predicts unchanged, updated (with the changed fields) and restored, changing nothing', async () => {
      const tenant = uniqueTenant();
      const { pub, etag } = await published(tenant);
      const same = await call(t.app, 'PUT', '/v1/tools/issue_refund?dry_run=true', { token: pub, body: toolDocument(), headers: { 'if-match': etag } });
      expect(same.statusCode, same.body).toBe(200);
      expect(same.json()).toMatchObject({ dry_run: true, outcome: 'unchanged', changes: [], etag });

      const next = toolDocument({ version: '1.1.0', description: 'Refund a paid invoice, in full or in part.' });
      const updated = await call(t.app, 'PUT', '/v1/tools/issue_refund?dry_run=true', { token: pub, body: next, headers: { 'if-match': etag } });
      expect(updated.json()).toMatchObject({ dry_run: true, outcome: 'updated', changes: ['description', 'version'], tool: { version: '1.1.0', revision: 2 } });
      const stored = await call(t.app, 'GET', '/v1/tools/issue_refund', { token: pub });
      expect(stored.json()).toMatchObject({ version: '1.0.0', revision: 1 });
      expect(stored.headers.etag).toBe(etag);

      const retired = await call(t.app, 'DELETE', '/v1/tools/issue_refund', { token: pub });
      const restore = await call(t.app, 'PUT', '/v1/tools/issue_refund?dry_run=true', { token: pub, body: toolDocument(), headers: { 'if-match': retired.headers.etag as string } });
      expect(restore.json()).toMatchObject({ outcome: 'restored', changes: ['status'], tool: { status: 'active' } });
      expect((await call(t.app, 'GET', '/v1/tools/issue_refund', { token: pub })).json().status).toBe('retired');
      expect((await auditTrail(db.database, tenant)).map((entry) => entry.action)).toEqual(['publish', 'retire']);
    });

    it('gives the real call\'s 409 for changed content under the same version, 412 for a stale If-Match, 404 for a missing tool', async () => {
      const tenant = uniqueTenant();
      const { pub, etag } = await published(tenant);
      const sameVersion = await call(t.app, 'PUT', '/v1/tools/issue_refund?dry_run=true', { token: pub, body: toolDocument({ description: 'Changed, same version.' }) });
      expect(sameVersion.statusCode).toBe(409);
      expect(sameVersion.json().error.details).toEqual([{ pointer: '/version', message: 'must be greater than 1.0.0' }]);
      const stale = await call(t.app, 'PUT', '/v1/tools/issue_refund?dry_run=true', { token: pub, body: toolDocument({ version: '2.0.0' }), headers: { 'if-match': '"9-0000000000000000"' } });
      expect(stale.statusCode).toBe(412);
      const missing = await call(t.app, 'PUT', '/v1/tools/nothing_here?dry_run=true', { token: pub, body: toolDocument({ name: 'nothing_here' }) });
      expect(missing.statusCode).toBe(404);
      expect((await call(t.app, 'GET', '/v1/tools/issue_refund', { token: pub })).headers.etag).toBe(etag);
    });
  });

  describe('unknown JSON Schema keywords', () => {
    const post = async (doc: Record<string, unknown>) => call(t.app, 'POST', '/v1/tools', { token: await publisher(uniqueTenant()), body: doc });
    const parameters = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });

    it('refuses a typo with its pointer and a suggestion, in parameters and returns', async () => {
      const res = await post(
        toolDocument({
          parameters: parameters({ amount: { type: 'number', minimun: 0, description: 'Amount' }, items: { type: 'array', items: { type: 'string', maxLenght: 3 } } }),
          returns: { type: 'object', propertys: {} },
        }),
      );
      expect(res.statusCode).toBe(400);
      const details: Detail[] = res.json().error.details;
      expect(details.map((d) => d.pointer).sort()).toEqual(['/parameters/properties/amount/minimun', '/parameters/properties/items/items/maxLenght', '/returns/propertys']);
      expect(details.find((d) => d.pointer.endsWith('minimun'))?.message).toContain('did you mean "minimum"?');
    });

    it('refuses an unknown format, draft-2020 keywords in a draft-07 schema, and $async', async () => {
      const format = await post(toolDocument({ parameters: parameters({ email: { type: 'string', format: 'emial' } }) }));
      expect(format.json().error.details.map((d: Detail) => d.pointer)).toEqual(['/parameters/properties/email/format']);
      const draft07 = await post(toolDocument({ parameters: parameters({ pair: { type: 'array', prefixItems: [{ type: 'string' }] } }, { $schema: 'http://json-schema.org/draft-07/schema#' }) }));
      expect(draft07.json().error.details.map((d: Detail) => d.pointer)).toEqual(['/parameters/properties/pair/prefixItems']);
      const async = await post(toolDocument({ parameters: parameters({}, { $async: true }) }));
      expect(async.json().error.details.map((d: Detail) => d.pointer)).toEqual(['/parameters/$async']);
    });

    it('accepts annotations, x- keywords, both definition keywords, formats Ajv knows, and data that looks like keywords', async () => {
      const res = await post(
        toolDocument({
          parameters: parameters(
            {
              minimun: { type: 'integer', title: 'A property named like a typo', description: 'fine: it is a name', default: 1, examples: [1, 2], deprecated: true, readOnly: false, 'x-ui': { widget: 'slider' } },
              when: { type: 'string', format: 'date-time', description: 'When' },
              size: { type: 'integer', format: 'int32', description: 'Size' },
              choice: { enum: [{ minimun: 1 }, 'a'], const: undefined, description: 'Data is not a keyword' },
              ref: { $ref: '#/$defs/thing' },
              other: { $ref: '#/definitions/thing' },
            },
            { $defs: { thing: { type: 'string', $comment: 'fine' } }, definitions: { thing: { type: 'string' } }, dependentRequired: { when: ['size'] }, additionalProperties: false },
          ),
        }),
      );
      expect(res.statusCode, res.body).toBe(201);
    });
  });

  describe('index_status in the publisher\'s view', () => {
    it('is indexed at once without an embedder, and never shown to a caller who is not a publisher', async () => {
      const tenant = uniqueTenant();
      const pub = await publisher(tenant);
      await call(t.app, 'POST', '/v1/tools', { token: pub, body: toolDocument() });
      expect((await call(t.app, 'GET', '/v1/tools/issue_refund', { token: pub })).json().index_status).toBe('indexed');
      expect((await call(t.app, 'GET', '/v1/tools/issue_refund', { token: await token({ tenant }) })).json()).not.toHaveProperty('index_status');
    });
  });

  /** Fails while unhealthy; while a gate is set, every call waits for it. */
  class GatedEmbedder extends FlakyEmbedder {
    gate: Promise<void> | undefined;
    override async embed(texts: string[]): Promise<number[][]> {
      await this.gate;
      return super.embed(texts);
    }
  }

  describe('index_status with an embedder', () => {
    const embedder = new GatedEmbedder();
    const e = useDiscoveryApp(db, () => embedder);

    it('is failed while the embedder fails, pending after an edit, indexed once the vectors are current', async () => {
      const tenant = uniqueTenant();
      const pub = await publisher(tenant);
      const status = async () => (await call(e.app, 'GET', '/v1/tools/issue_refund', { token: pub })).json().index_status as string;
      embedder.healthy = false;
      await call(e.app, 'POST', '/v1/tools', { token: pub, body: toolDocument() });
      // A publish that lands while a retry sweep is failing is attempted by the next sweep: flush
      // again until the indexer has tried this tool (bounded).
      for (let i = 0; i < 5 && (await status()) !== 'failed'; i += 1) await e.flush();
      expect(await status()).toBe('failed');
      embedder.healthy = true;
      await e.flush();
      expect(await status()).toBe('indexed');
      // An edit makes the vectors stale: pending until the indexer has embedded the new content.
      let open = () => undefined as void;
      embedder.gate = new Promise<void>((resolve) => (open = resolve));
      const put = await call(e.app, 'PUT', '/v1/tools/issue_refund', { token: pub, body: toolDocument({ version: '1.1.0', description: 'Refund an invoice that was paid.' }) });
      expect(put.statusCode).toBe(200);
      expect(await status()).toBe('pending');
      embedder.gate = undefined;
      open();
      await e.flush();
      expect(await status()).toBe('indexed');
    });
  });

  describe('token costs of tools stored before the current formats', () => {
    it('are re-priced by the start-up backfill, with not_for in the description', async () => {
      const tenant = uniqueTenant();
      const pub = await publisher(tenant);
      const created = await call(t.app, 'POST', '/v1/tools', { token: pub, body: toolDocument() });
      const current = created.json().tokens as Record<string, number>;
      expect(Object.keys(current).sort()).toEqual([...FORMATS].sort());
      await db.database.db.execute(sql`update tools set token_costs = '{"openai": 1, "anthropic": 1, "mcp": 1, "raw": 1}'::jsonb where tenant_id = ${tenant}`);
      const updated = await new TokenCostBackfill(db.database.db, { info: () => undefined }).run();
      expect(updated).toBeGreaterThanOrEqual(1);
      expect((await call(t.app, 'GET', '/v1/tools/issue_refund', { token: pub })).json().tokens).toEqual(current);
    });
  });
});
