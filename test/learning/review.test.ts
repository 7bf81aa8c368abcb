import { beforeAll, describe, expect, it } from 'vitest';

import type { Embedder } from '../../src/embedding/provider.js';
import { type DiscoverResponse, useDiscoveryApp } from '../discovery/helpers.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

/** The hashing embedder, remembering every text it was asked to embed. */
class RecordingEmbedder implements Embedder {
  readonly model = 'test-hashing-64';
  readonly texts: string[] = [];
  private readonly inner = new HashingEmbedder();
  embed(texts: string[]): Promise<number[][]> {
    this.texts.push(...texts);
    return this.inner.embed(texts);
  }
}

interface Alias {
  id: number;
  query: string;
  misses: number;
  support: number;
  active: boolean;
  review: string;
  reviewed_by: string | null;
  taught_by: { subject: string; at: string }[];
}

const doc = (name: string, description: string, extra: Record<string, unknown> = {}) =>
  toolDocument({ name, description, summary: undefined, aliases: [], examples: [], tags: [], category: undefined, not_for: undefined, required_scopes: [], sensitivity: 'low', side_effects: false, policy: undefined, ...extra });

/**
 * Learned aliases as publishers manage them, on every database leg: who taught each, approval of
 * risky tools' aliases, rejection, the per-subject budget, and vectors only for what changed.
 */
forEachDatabase((db) => {
  describe('learned alias review, budget and indexing', () => {
    const embedder = new RecordingEmbedder();
    const ctx = useDiscoveryApp(db, () => embedder, { LEARNED_ALIAS_VOTES_PER_HOUR: '3' });
    let tenant: string;
    let publisher: string;
    const as = (sub: string, scopes: string[] = []) => token({ tenant, scopes, sub });

    beforeAll(async () => {
      tenant = uniqueTenant('review');
      publisher = await token({ tenant, scopes: [PUBLISH], sub: 'pub-1' });
      const tools = [
        doc('lookup_fx_rate', 'Currency conversion rates between ISO 4217 codes.', { aliases: ['exchange rate', 'currency converter'], examples: ['EUR to USD today'] }),
        doc('pay_vendor', 'Pay a vendor invoice from the operating account.', { side_effects: true }),
        doc('get_weather', 'Weather forecast for a city: temperature, rain and wind.'),
        doc('book_flight', 'Book a flight between two airports on a given date.'),
      ];
      for (const tool of tools) expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: tool })).statusCode).toBe(201);
      await ctx.flush();
    });

    const discover = async (tk: string, query: string) =>
      (await call(ctx.app, 'POST', '/v1/discover', { token: tk, body: { query, top_k: 1 } })).json<DiscoverResponse>();
    const teach = async (subjects: string[], query: string, name: string) => {
      for (const sub of subjects) {
        const tk = await as(sub);
        const offered = await discover(tk, query);
        expect(offered.tools.map((t) => t.name)).not.toContain(name);
        expect((await call(ctx.app, 'POST', '/v1/authorize', { token: tk, body: { tool: name, arguments: { invoice_id: 'x' }, discovery_id: offered.discovery_id } })).json().decision).toBe('allow');
      }
      await ctx.flush();
    };
    const aliases = async (name: string) =>
      (await call(ctx.app, 'GET', `/v1/tools/${name}/learned-aliases`, { token: publisher })).json<{ learned_aliases: Alias[] }>().learned_aliases;
    const review = (name: string, id: number, action: 'approve' | 'reject', tk = publisher) =>
      call(ctx.app, 'POST', `/v1/tools/${name}/learned-aliases/${id}/${action}`, { token: tk });

    it('an alias three subjects taught embeds that one text, not every text of the tool', async () => {
      // Query embeddings go through the same embedder: cache this one first, so only the indexer embeds.
      await discover(await as('reader'), 'how many yen is a euro worth');
      embedder.texts.length = 0;
      await teach(['fx-1', 'fx-2', 'fx-3'], 'how many yen is a euro worth', 'lookup_fx_rate');
      expect(embedder.texts).toEqual(['how many yen is a euro worth']);
      const [alias] = await aliases('lookup_fx_rate');
      expect(alias).toMatchObject({ support: 3, misses: 3, active: true, review: 'not_required' });
      expect(alias!.taught_by.map((t) => t.subject).sort()).toEqual(['fx-1', 'fx-2', 'fx-3']);
      expect((await discover(await as('reader'), 'how many yen is a euro worth')).tools[0]?.name).toBe('lookup_fx_rate');
    });

    it("a side-effecting tool's alias waits for a publisher's approval, then ranks", async () => {
      const query = 'settle the acme bill';
      await teach(['pv-1', 'pv-2', 'pv-3'], query, 'pay_vendor');
      const [pending] = await aliases('pay_vendor');
      expect(pending).toMatchObject({ query, support: 3, active: false, review: 'pending' });
      expect((await discover(await as('reader'), query)).tools[0]?.name).not.toBe('pay_vendor');

      expect((await review('pay_vendor', pending!.id, 'approve', await as('reader'))).statusCode).toBe(403);
      expect((await review('pay_vendor', 999_999, 'approve')).statusCode).toBe(404);
      const stranger = await token({ tenant: uniqueTenant('stranger'), scopes: [PUBLISH] });
      expect((await review('pay_vendor', pending!.id, 'approve', stranger)).statusCode).toBe(404);

      const approved = await review('pay_vendor', pending!.id, 'approve');
      expect(approved.statusCode).toBe(200);
      expect(approved.json().learned_alias).toMatchObject({ active: true, review: 'approved', reviewed_by: 'pub-1' });
      await ctx.flush();
      expect((await discover(await as('reader'), query)).tools[0]?.name).toBe('pay_vendor');
      const audit = await call(ctx.app, 'GET', '/v1/audit?action=approve_alias', { token: publisher });
      expect(audit.json().entries).toEqual([expect.objectContaining({ action: 'approve_alias', actor: 'pub-1' })]);
    });

    it('a rejected alias stops ranking and is not taught again', async () => {
      const [alias] = await aliases('lookup_fx_rate');
      const rejected = await review('lookup_fx_rate', alias!.id, 'reject');
      expect(rejected.json().learned_alias).toMatchObject({ active: false, review: 'rejected' });
      await ctx.flush();
      expect((await discover(await as('reader'), 'how many yen is a euro worth')).tools.map((t) => t.name)).not.toContain('lookup_fx_rate');
      await teach(['fx-4'], 'how many yen is a euro worth', 'lookup_fx_rate');
      expect((await aliases('lookup_fx_rate'))[0]).toMatchObject({ misses: 3, support: 3, active: false, review: 'rejected' });
    });

    it('a new version that adds side effects takes its aliases out of ranking until approved', async () => {
      // Its words name another tool's ("flight"), none of get_weather's: only the alias can send it there.
      const query = 'will my picnic flight get soaked';
      await teach(['w-1', 'w-2', 'w-3'], query, 'get_weather');
      expect((await aliases('get_weather'))[0]).toMatchObject({ active: true });
      const riskier = doc('get_weather', 'Weather forecast for a city: temperature, rain and wind.', { version: '1.1.0', side_effects: true });
      expect((await call(ctx.app, 'PUT', '/v1/tools/get_weather', { token: publisher, body: riskier })).statusCode).toBe(200);
      expect((await aliases('get_weather'))[0]).toMatchObject({ active: false, review: 'pending' });
      await ctx.flush();
      expect((await discover(await as('reader'), query)).tools.map((t) => t.name)).not.toContain('get_weather');
    });

    it('bounds what one subject teaches per hour', async () => {
      for (let i = 0; i < 5; i += 1) await teach(['busy'], `qz${i}a qz${i}b`, 'book_flight');
      expect((await aliases('book_flight')).length).toBe(3);
    });
  });
});
