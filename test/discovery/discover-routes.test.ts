import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';

import { rowsOf } from '../../src/db/client.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { FlakyEmbedder, HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { type DiscoverResponse, useDiscoveryApp } from './helpers.js';

const tool = (name: string, description: string, extra: Record<string, unknown> = {}) =>
  toolDocument({ name, description, summary: undefined, aliases: [], examples: [], tags: [], category: undefined, not_for: undefined, ...extra });

forEachDatabase((db) => {
  describe('POST /v1/discover', () => {
    const ctx = useDiscoveryApp(db, () => new HashingEmbedder());
    const tenant = uniqueTenant('disc');
    let publisher: string;
    let reader: string;

    beforeAll(async () => {
      publisher = await token({ tenant, scopes: [PUBLISH, 'billing:read'] });
      reader = await token({ tenant, scopes: ['support:read'] });
      const docs = [
        tool('issue_refund', 'Refund a paid invoice in full or in part.', { required_scopes: ['billing:read'], category: 'billing', tags: ['billing'] }),
        tool('track_shipment', 'Track a freight shipment and report its location and delivery estimate.', { category: 'logistics', tags: ['shipping'] }),
        tool('search_tickets', 'Search support tickets by customer or status.', { required_scopes: ['support:read'], category: 'support', tags: ['support'] }),
        tool('retired_tool', 'Refund tickets shipment invoice everything.'),
      ];
      for (const doc of docs) expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
      expect((await call(ctx.app, 'DELETE', '/v1/tools/retired_tool', { token: publisher })).statusCode).toBe(200);
      await ctx.flush();
    });

    const discover = async (tokenValue: string, body: Record<string, unknown>) => {
      const response = await call(ctx.app, 'POST', '/v1/discover', { token: tokenValue, body });
      return { status: response.statusCode, body: response.json<DiscoverResponse>() };
    };

    it('returns the best tools first with cards, schemas and token counts', async () => {
      const { status, body } = await discover(publisher, { query: 'refund the invoice' });
      expect(status).toBe(200);
      expect(body.search_mode).toBe('hybrid');
      expect(body.tools[0]).toMatchObject({ name: 'issue_refund', version: '1.0.0' });
      expect(body.tools[0]!.card).toMatchObject({ name: 'issue_refund', not_for: null, required_scopes: ['billing:read'] });
      expect(body.tools[0]!.schema).toMatchObject({ type: 'function', function: { name: 'issue_refund' } });
      expect(body.tools.length).toBeLessThanOrEqual(3);
      const cardTokens = body.tools.reduce((sum, t) => sum + (t.card.tokens as { openai: number }).openai, 0);
      expect(body.tokens.shortlist).toBe(cardTokens);
      expect(body.tokens.catalog).toBeGreaterThanOrEqual(body.tokens.shortlist);
      expect(body.discovery_id).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('searches a pasted conversation by its last user turn, and says so', async () => {
      const query = 'User: refund the invoice please\nAssistant: Done, the refund is issued.\nUser: where is my freight shipment now?';
      const { status, body } = await discover(publisher, { query, mode: 'lexical' });
      expect(status).toBe(200);
      expect(body.tools.map((t) => t.name)).toEqual(['track_shipment']);
      expect((body as DiscoverResponse & { searched_query: unknown }).searched_query).toEqual({ bounded: true, part: 'last_user_turn', chars: 'where is my freight shipment now?'.length, total_chars: query.replace(/\s+/g, ' ').length });
    });

    it('never returns a tool whose scopes the caller lacks, nor a retired one', async () => {
      const { body } = await discover(reader, { query: 'refund invoice shipment tickets', top_k: 10 });
      const names = body.tools.map((t) => t.name);
      expect(names).not.toContain('issue_refund');
      expect(names).not.toContain('retired_tool');
      expect(names).toContain('search_tickets');
    });

    it('never returns another tenant\'s tools', async () => {
      const stranger = await token({ tenant: uniqueTenant('other'), scopes: [PUBLISH, 'billing:read', 'support:read'] });
      const { status, body } = await discover(stranger, { query: 'refund invoice shipment tickets', top_k: 10 });
      expect(status).toBe(200);
      expect(body.tools).toEqual([]);
      expect(body.tokens).toEqual({ shortlist: 0, catalog: 0 });
    });

    it('counts in tokens.catalog only what the caller may see', async () => {
      const all = (await discover(publisher, { query: 'refund' })).body.tokens.catalog;
      const some = (await discover(reader, { query: 'refund' })).body.tokens.catalog;
      expect(some).toBeLessThan(all);
    });

    it('updates tokens.catalog as soon as a tool is published', async () => {
      const before = (await discover(publisher, { query: 'refund' })).body.tokens.catalog;
      await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: tool('export_report', 'Export a sales report as CSV.') });
      const after = (await discover(publisher, { query: 'refund' })).body.tokens.catalog;
      expect(after).toBeGreaterThan(before);
    });

    it('applies category and tag filters inside the search', async () => {
      const query = 'refund a paid invoice or track a freight shipment';
      const { body } = await discover(publisher, { query, top_k: 10, filters: { category: 'logistics' } });
      expect(body.tools.map((t) => t.name)).toEqual(['track_shipment']);
      const tagged = await discover(publisher, { query, top_k: 10, filters: { tags: ['billing'] } });
      expect(tagged.body.tools.map((t) => t.name)).toEqual(['issue_refund']);
    });

    it('lets an exact tool name in the query win outright', async () => {
      const { body } = await discover(publisher, { query: 'please call track_shipment for invoice refund' });
      expect(body.tools[0]).toMatchObject({ name: 'track_shipment', score: 1 });
      expect(body.low_confidence).toBe(false);
    });

    it.each([
      ['anthropic', { name: 'issue_refund', input_schema: { type: 'object' } }],
      ['mcp', { name: 'issue_refund', inputSchema: { type: 'object' }, annotations: { readOnlyHint: false, destructiveHint: true } }],
      ['raw', { name: 'issue_refund', parameters: { type: 'object' } }],
      ['openai', { type: 'function', function: { name: 'issue_refund', parameters: { type: 'object' } } }],
    ])('renders schemas in %s format', async (format, expected) => {
      const { body } = await discover(publisher, { query: 'issue_refund', format, top_k: 1 });
      expect(body.tools[0]!.schema).toMatchObject(expected);
    });

    it.each([
      [{ query: 'x', top_k: 0 }, '/top_k'],
      [{ query: 'x', top_k: 11 }, '/top_k'],
      [{ query: 'x', format: 'xml' }, '/format'],
      [{ top_k: 3 }, '/query'],
      [{ query: '   ' }, '/query'],
      [{ query: 'x', tenant_id: 'other' }, '/tenant_id'],
      [{ query: 'x', filters: { scopes: ['admin'] } }, '/filters/scopes'],
    ])('rejects %j with a 400 naming %s', async (body, pointer) => {
      const response = await call(ctx.app, 'POST', '/v1/discover', { token: publisher, body });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details.map((d: { pointer: string }) => d.pointer)).toContain(pointer);
    });

    it('needs a token', async () => {
      expect((await call(ctx.app, 'POST', '/v1/discover', { body: { query: 'refund' } })).statusCode).toBe(401);
    });

    it('logs each discovery with what the filter withheld, for publishers only', async () => {
      const { body } = await discover(reader, { query: 'qqq zzz unmatched words' });
      // The log is written in batches; listing it writes what is buffered first.
      const report = await call(ctx.app, 'GET', '/v1/discoveries?poor=true', { token: publisher });
      expect(report.statusCode).toBe(200);
      expect(report.json().discoveries.map((d: { query: string }) => d.query)).toContain('qqq zzz unmatched words');

      const [row] = await rowsOf<{ withheld: number; query: string; search_mode: string }>(
        db.database.db.execute(sql`select withheld, query, search_mode from discovery_log where id = ${body.discovery_id}`),
      );
      expect(row).toMatchObject({ query: 'qqq zzz unmatched words', search_mode: 'hybrid' });
      expect(row!.withheld).toBeGreaterThanOrEqual(1);
      expect(JSON.stringify(body)).not.toContain('withheld');
      expect((await call(ctx.app, 'GET', '/v1/discoveries', { token: reader })).statusCode).toBe(403);
    });
  });

  describe('POST /v1/discover when the embedder fails', () => {
    const embedder = new FlakyEmbedder();
    const ctx = useDiscoveryApp(db, () => embedder, { EMBEDDING_TIMEOUT_MS: '100' });
    const tenant = uniqueTenant('flaky');

    it('still registers, degrades to lexical search, and recovers once vectors are filled in', async () => {
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      const created = await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: tool('track_shipment', 'Track a freight shipment.') });
      expect(created.statusCode).toBe(201);
      await ctx.flush();
      const degraded = (await call(ctx.app, 'POST', '/v1/discover', { token: publisher, body: { query: 'track my shipment' } })).json<DiscoverResponse>();
      expect(degraded.search_mode).toBe('lexical');
      expect(degraded.tools.map((t) => t.name)).toEqual(['track_shipment']);
      expect((await call(ctx.app, 'GET', '/readyz')).json().checks.embedder).toMatch(/^degraded/);

      embedder.hang = true;
      const started = performance.now();
      const hung = (await call(ctx.app, 'POST', '/v1/discover', { token: publisher, body: { query: 'where is my freight' } })).json<DiscoverResponse>();
      expect(hung.search_mode).toBe('lexical');
      expect(performance.now() - started).toBeLessThan(2_000);

      embedder.hang = false;
      embedder.healthy = true;
      await ctx.flush();
      const recovered = (await call(ctx.app, 'POST', '/v1/discover', { token: publisher, body: { query: 'track my shipment please' } })).json<DiscoverResponse>();
      expect(recovered.search_mode).toBe('hybrid');
      expect(recovered.tools[0]!.name).toBe('track_shipment');
    });
  });
});
