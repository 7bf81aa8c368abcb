import { describe, expect, it } from 'vitest';

import type { DiscoveredTool } from '../../src/discovery/schemas.js';
import { ShortlistCache } from '../../src/discovery/shortlist-cache.js';
import type { Embedder, EmbedOptions } from '../../src/embedding/provider.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { FlakyEmbedder, HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { type DiscoverResponse, useDiscoveryApp } from './helpers.js';

/** Tool texts wait for `open()`; query texts never wait (vectors that land after a discovery). */
class GatedEmbedder implements Embedder {
  readonly model = 'test-hashing-64';
  private readonly inner = new HashingEmbedder();
  private release: () => void = () => undefined;
  private gate = new Promise<void>((resolve) => (this.release = resolve));

  open(): void {
    this.release();
  }

  async embed(texts: string[], options?: EmbedOptions): Promise<number[][]> {
    if (options?.purpose !== 'query') await this.gate;
    return this.inner.embed(texts);
  }
}

const plain = (name: string, description: string, requiredScopes: string[] = []) =>
  toolDocument({ name, description, summary: undefined, aliases: [], examples: [], tags: [], category: undefined, not_for: undefined, required_scopes: requiredScopes, policy: undefined });

const counter = (metrics: string, result: 'hit' | 'miss'): number =>
  Number(new RegExp(`tool_registry_shortlist_cache_total\\{result="${result}"\\} (\\d+)`).exec(metrics)?.[1] ?? 0);

/** Retrieval statements run so far (the retrieval stage's count, over every search mode). */
const retrievals = (metrics: string): number =>
  [...metrics.matchAll(/tool_registry_discovery_stage_seconds_count\{stage="retrieval",search_mode="[a-z]+"\} (\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);

describe('ShortlistCache', () => {
  it('keys by the whole visibility and request, and freezes what it stores', () => {
    const input = { query: 'q', top_k: 3, format: 'openai' as const, mode: 'hybrid' as const };
    const alice = { tenant: 't', subject: 'a', scopes: ['b', 'a'] };
    const key = ShortlistCache.key(alice, input, 'q');
    // Scope sets and tag sets, not their order; the subject is not part of what a caller sees.
    expect(ShortlistCache.key({ ...alice, subject: 'z', scopes: ['a', 'b'] }, input, 'q')).toBe(key);
    for (const other of [
      ShortlistCache.key({ ...alice, scopes: ['a'] }, input, 'q'),
      ShortlistCache.key({ ...alice, tenant: 'u' }, input, 'q'),
      ShortlistCache.key(alice, { ...input, top_k: 2 }, 'q'),
      ShortlistCache.key(alice, { ...input, format: 'mcp' }, 'q'),
      ShortlistCache.key(alice, { ...input, mode: 'lexical' }, 'q'),
      ShortlistCache.key(alice, { ...input, filters: { tags: ['x'] } }, 'q'),
      ShortlistCache.key(alice, input, 'q2'),
    ]) {
      expect(other).not.toBe(key);
    }
    expect(ShortlistCache.key(alice, { ...input, filters: { tags: ['y', 'x'] } }, 'q')).toBe(ShortlistCache.key(alice, { ...input, filters: { tags: ['x', 'y'] } }, 'q'));

    const cache = new ShortlistCache({ maxBytes: 1 << 20, ttlMs: 60_000 });
    const card = {} as DiscoveredTool['card'];
    cache.set(key, { revision: 4, tools: [{ name: 'n', version: '1', score: 0.9, card, schema: { a: { b: 1 } } }], shortlistTokens: 1, catalogTokens: 2, withheld: 0, lowConfidence: false, searchMode: 'hybrid' });
    expect(cache.get(key, 5)).toBeUndefined();
    const entry = cache.get(key, 4)!;
    expect(() => ((entry.tools[0]!.schema.a as { b: number }).b = 2)).toThrow(TypeError);
    expect(cache.stats).toEqual({ hits: 1, misses: 1 });
    expect(new ShortlistCache({ maxBytes: 0, ttlMs: 1 }).enabled).toBe(false);
  });
});

forEachDatabase((db) => {
  describe('shortlist cache', () => {
    const gated = new GatedEmbedder();
    // The cache is under test, not the score floor: every matching tool of these two-tool catalogs is shown.
    const ctx = useDiscoveryApp(db, () => gated, { DISCOVERY_MIN_SCORE: '0' });
    const counters = async () => {
      const text = (await call(ctx.app, 'GET', '/metrics')).body;
      return { hit: counter(text, 'hit'), miss: counter(text, 'miss') };
    };

    it('serves a repeat from the cache with its own discovery id, and recomputes once the catalog or its vectors change', async () => {
      const tenant = uniqueTenant('shortlist');
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      const agent = await token({ tenant, scopes: [] });
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: plain('export_sales_csv', 'Export the sales report as a CSV file.') })).statusCode).toBe(201);
      const discover = async () => (await call(ctx.app, 'POST', '/v1/discover', { token: agent, body: { query: 'export the sales report', top_k: 3 } })).json<DiscoverResponse>();

      // No tool vector yet: ranked on lexical evidence, cached at this revision.
      const first = await discover();
      const start = await counters();
      const repeat = await discover();
      expect(await counters()).toEqual({ hit: start.hit + 1, miss: start.miss });
      expect(repeat.tools).toEqual(first.tools);
      expect(repeat.discovery_id).not.toBe(first.discovery_id);

      // The vectors land after the tool's own commit: they bump the revision too (migration 0014).
      gated.open();
      await ctx.flush();
      const withVectors = await discover();
      expect(await counters()).toEqual({ hit: start.hit + 1, miss: start.miss + 1 });
      expect(withVectors.tools.map((t) => t.name)).toEqual(['export_sales_csv']);

      // A new tool shows in the next discovery, and a retired one leaves it.
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: plain('export_sales_xlsx', 'Export the sales report as an Excel file.') })).statusCode).toBe(201);
      await ctx.flush();
      expect((await discover()).tools.map((t) => t.name).sort()).toEqual(['export_sales_csv', 'export_sales_xlsx']);
      expect((await call(ctx.app, 'DELETE', '/v1/tools/export_sales_csv', { token: publisher })).statusCode).toBeLessThan(300);
      expect((await discover()).tools.map((t) => t.name)).toEqual(['export_sales_xlsx']);
    }, 60_000);

    it('computes concurrent identical discoveries once', async () => {
      const tenant = uniqueTenant('shortlist-flight');
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: plain('archive_ticket', 'Archive a closed support ticket.') })).statusCode).toBe(201);
      await ctx.flush();
      const agent = await token({ tenant, scopes: [] });
      const computations = async () => retrievals((await call(ctx.app, 'GET', '/metrics')).body);
      const before = await computations();
      const responses = await Promise.all(
        Array.from({ length: 6 }, () => call(ctx.app, 'POST', '/v1/discover', { token: agent, body: { query: 'archive the closed ticket' } })),
      );
      expect(responses.map((r) => r.statusCode)).toEqual(Array(6).fill(200));
      expect(new Set(responses.map((r) => JSON.stringify(r.json<DiscoverResponse>().tools))).size).toBe(1);
      expect(new Set(responses.map((r) => r.json<DiscoverResponse>().discovery_id)).size).toBe(6);
      expect((await computations()) - before).toBe(1);
    }, 60_000);

    it('never serves one scope set what another may see', async () => {
      const tenant = uniqueTenant('shortlist-scopes');
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: plain('refund_invoice', 'Refund a paid invoice.', ['billing:write']) })).statusCode).toBe(201);
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: plain('view_invoice', 'Show a paid invoice.') })).statusCode).toBe(201);
      await ctx.flush();
      const body = { query: 'refund a paid invoice', top_k: 5 };
      const names = async (scopes: string[]) => (await call(ctx.app, 'POST', '/v1/discover', { token: await token({ tenant, scopes }), body })).json<DiscoverResponse>().tools.map((t) => t.name).sort();
      expect(await names(['billing:write'])).toEqual(['refund_invoice', 'view_invoice']);
      expect(await names(['billing:write'])).toEqual(['refund_invoice', 'view_invoice']);
      expect(await names([])).toEqual(['view_invoice']);
      expect(await names(['billing:read'])).toEqual(['view_invoice']);
    }, 60_000);
  });

  describe('shortlist cache and the popularity prior', () => {
    const ctx = useDiscoveryApp(db, () => new HashingEmbedder());

    it('takes allowed calls in only after DISCOVERY_CACHE_TTL_MS (they do not bump the revision)', async () => {
      const tenant = uniqueTenant('shortlist-usage');
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      const agent = await token({ tenant, scopes: [] });
      for (const doc of [plain('export_csv_one', 'Export the sales report as CSV.'), plain('export_csv_two', 'Export the sales report as CSV.')]) {
        expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
      }
      await ctx.flush();
      const rank = async () => (await call(ctx.app, 'POST', '/v1/discover', { token: agent, body: { query: 'export the sales report as csv', top_k: 2 } })).json<DiscoverResponse>().tools.map((t) => t.name);
      expect(await rank()).toEqual(['export_csv_one', 'export_csv_two']);
      for (let i = 0; i < 3; i += 1) {
        expect((await call(ctx.app, 'POST', '/v1/authorize', { token: agent, body: { tool: 'export_csv_two', arguments: { invoice_id: 'x' } } })).json().decision).toBe('allow');
      }
      // Within the default TTL (60 s) the cached order stands; test/learning/popularity.test.ts shows the reorder.
      expect(await rank()).toEqual(['export_csv_one', 'export_csv_two']);
    }, 60_000);
  });

  describe('shortlist cache and a failing embedder', () => {
    const flaky = new FlakyEmbedder();
    const ctx = useDiscoveryApp(db, () => flaky);

    it('does not keep a lexical fallback once the embedder is back', async () => {
      const tenant = uniqueTenant('shortlist-flaky');
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      flaky.healthy = true;
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: plain('export_sales_csv', 'Export the sales report as a CSV file.') })).statusCode).toBe(201);
      await ctx.flush();
      flaky.healthy = false;
      const agent = await token({ tenant, scopes: [] });
      const mode = async () => (await call(ctx.app, 'POST', '/v1/discover', { token: agent, body: { query: 'export the sales report for the quarter' } })).json<DiscoverResponse>().search_mode;
      expect(await mode()).toBe('lexical');
      flaky.healthy = true;
      expect(await mode()).toBe('hybrid');
    }, 60_000);
  });
});
