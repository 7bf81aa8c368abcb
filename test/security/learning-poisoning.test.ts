import { beforeAll, describe, expect, it } from 'vitest';

import { type DiscoverResponse, useDiscoveryApp } from '../discovery/helpers.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

const tool = (name: string, description: string, extra: Record<string, unknown> = {}) =>
  toolDocument({ name, description, summary: undefined, aliases: [], examples: [], tags: [], category: 'general', not_for: undefined, required_scopes: [], sensitivity: 'low', side_effects: false, policy: undefined, ...extra });

const CATALOG = [
  tool('wire_transfer', 'Send a wire transfer of money from the company account to a bank account.', { required_scopes: ['payments:admin'], sensitivity: 'high', side_effects: true, category: 'payments' }),
  tool('send_email', 'Send an email message to a recipient.', { side_effects: true, category: 'messaging' }),
  tool('get_weather', 'Weather forecast for a city: temperature, rain and wind.'),
  tool('reset_password', 'Reset the password of a user account and send a reset link.'),
  tool('book_flight', 'Book a flight between two airports on a given date.'),
  tool('lookup_fx_rate', 'Currency conversion rates between ISO 4217 codes.'),
];

const EVERYDAY = 'reset my password book a flight to rome what is the weather tomorrow send money to my landlord please help me with my account today and then';

/**
 * The learned-alias poisoning attacks of issue 13 (finding 1), each replayed through the HTTP API
 * on every database leg: none may change what another user of the tenant is shown. They all
 * succeeded against the registry before learning counted distinct subjects.
 */
forEachDatabase((db) => {
  describe('learned aliases cannot be poisoned', () => {
    const ctx = useDiscoveryApp(db, () => new HashingEmbedder());
    let tenant: string;
    let publisher: string;
    let victim: string;
    const as = (sub: string, scopes: string[] = []) => token({ tenant, scopes, sub });

    beforeAll(async () => {
      tenant = uniqueTenant('poison');
      publisher = await token({ tenant, scopes: [PUBLISH] });
      victim = await as('victim', ['payments:admin']);
      for (const doc of CATALOG) expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
      await ctx.flush();
    });

    const discover = async (tk: string, query: string, extra: Record<string, unknown> = {}) =>
      (await call(ctx.app, 'POST', '/v1/discover', { token: tk, body: { query, top_k: 3, ...extra } })).json<DiscoverResponse>();
    const authorize = async (tk: string, name: string, discoveryId: string) => {
      const res = await call(ctx.app, 'POST', '/v1/authorize', { token: tk, body: { tool: name, arguments: { invoice_id: 'x' }, discovery_id: discoveryId } });
      expect(res.json().decision).toBe('allow');
    };
    const first = async (tk: string, query: string) => {
      await ctx.flush();
      return (await discover(tk, query)).tools[0]?.name;
    };
    /** One caller's miss: discover (top 1), then call `name` `times` times citing it, unless it was offered. */
    const miss = async (tk: string, query: string, name: string, times = 2) => {
      const offered = await discover(tk, query, { top_k: 1 });
      if (offered.tools.some((t) => t.name === name)) return false;
      for (let i = 0; i < times; i += 1) await authorize(tk, name, offered.discovery_id);
      return true;
    };
    const learned = async (name: string) =>
      (await call(ctx.app, 'GET', `/v1/tools/${name}/learned-aliases`, { token: publisher })).json<{ learned_aliases: { query: string; misses: number; active: boolean }[] }>()
        .learned_aliases;

    it('a reader without scopes, citing a filtered discovery, cannot put send_email above wire_transfer', async () => {
      const query = 'transfer money to my landlord';
      expect(await first(victim, query)).toBe('wire_transfer');
      const mallory = await as('mallory');
      const offered = await discover(mallory, query, { filters: { category: 'nothing-here' } });
      expect(offered.tools).toEqual([]);
      await authorize(mallory, 'send_email', offered.discovery_id);
      await authorize(mallory, 'send_email', offered.discovery_id);
      expect(await first(victim, query)).toBe('wire_transfer');
    });

    it('one principal, however many requests, creates no alias that ranks', async () => {
      const query = 'ping my landlord about the rent';
      const mallory = await as('mallory-2');
      expect(await miss(mallory, query, 'book_flight', 1)).toBe(true);
      for (let i = 0; i < 5; i += 1) await miss(mallory, query, 'book_flight', 1);
      expect(await first(victim, query)).not.toBe('book_flight');
      expect(await learned('book_flight')).toEqual([expect.objectContaining({ query, active: false })]);
    });

    it('one discovery cited 50 times counts once', async () => {
      const mallory = await as('mallory-3');
      const offered = await discover(mallory, 'tell me a joke about pirates', { top_k: 1 });
      expect(offered.tools.map((t) => t.name)).not.toContain('reset_password');
      for (let i = 0; i < 50; i += 1) await authorize(mallory, 'reset_password', offered.discovery_id);
      expect(await learned('reset_password')).toEqual([expect.objectContaining({ query: 'tell me a joke about pirates', misses: 1, active: false })]);
    });

    it("another user's discovery_id teaches nothing", async () => {
      const alice = await as('alice');
      const offered = await discover(alice, 'whats the time in tokyo', { top_k: 1 });
      expect(offered.tools.map((t) => t.name)).not.toContain('get_weather');
      for (const sub of ['mallory-4', 'mallory-5', 'mallory-6']) await authorize(await as(sub), 'get_weather', offered.discovery_id);
      expect(await learned('get_weather')).toEqual([]);
    });

    it('insiders holding the scope cannot make a high-sensitivity tool win an unrelated request without approval', async () => {
      const query = 'what is the weather in Paris tomorrow';
      expect(await first(victim, query)).toBe('get_weather');
      for (const sub of ['insider-1', 'insider-2', 'insider-3']) await miss(await as(sub, ['payments:admin']), query, 'wire_transfer');
      expect(await first(victim, query)).toBe('get_weather');
    });

    it('a 3,990-character alias of everyday words is never learned', async () => {
      const long = `${EVERYDAY} `.repeat(40).slice(0, 3990).trim();
      for (const sub of ['long-1', 'long-2', 'long-3']) await miss(await as(sub), long, 'lookup_fx_rate');
      expect(await first(victim, 'reset my password')).toBe('reset_password');
      expect(await first(victim, 'book a flight to Rome')).toBe('book_flight');
      expect((await learned('lookup_fx_rate')).map((a) => a.query)).not.toContain(long);
    });

    it('twenty junk entries from one principal do not evict an alias three users taught', async () => {
      const honest = 'how many yen is a euro worth';
      for (const sub of ['fx-1', 'fx-2', 'fx-3']) await miss(await as(sub), honest, 'lookup_fx_rate');
      expect(await first(victim, honest)).toBe('lookup_fx_rate');
      const mallory = await as('mallory-junk');
      // Twenty-one junk misses (the tool keeps twenty aliases), each query with words of its own.
      let junk = 0;
      for (let i = 0; junk < 21 && i < 100; i += 1) if (await miss(mallory, `qx${i}ja qx${i}jb qx${i}jc`, 'lookup_fx_rate')) junk += 1;
      expect(junk).toBe(21);
      expect(await first(victim, honest)).toBe('lookup_fx_rate');
    });
  });

  /**
   * Issue 32, finding 6: one subject's junk misses on a tool evicted an honest alias that one other
   * user had taught (eviction took the least supported of all). Replayed with a cap of 5 aliases
   * per tool (the default is 20; the mechanism is the same): misses now only turn over the
   * subject's own pending aliases.
   */
  describe("one subject's junk misses never evict another user's pending alias", () => {
    const ctx = useDiscoveryApp(db, () => new HashingEmbedder(), { LEARNED_ALIAS_MAX_PER_TOOL: '5' });
    const tenant = uniqueTenant('evict');
    let publisher: string;

    beforeAll(async () => {
      publisher = await token({ tenant, scopes: [PUBLISH] });
      for (const doc of CATALOG) expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
      await ctx.flush();
    });

    const miss = async (sub: string, query: string, name: string) => {
      const tk = await token({ tenant, sub });
      const offered = (await call(ctx.app, 'POST', '/v1/discover', { token: tk, body: { query, top_k: 1 } })).json<DiscoverResponse>();
      if (offered.tools.some((t) => t.name === name)) return false;
      const res = await call(ctx.app, 'POST', '/v1/authorize', { token: tk, body: { tool: name, arguments: { invoice_id: 'x' }, discovery_id: offered.discovery_id } });
      expect(res.json().decision).toBe('allow');
      return true;
    };
    const learned = async (name: string) =>
      (await call(ctx.app, 'GET', `/v1/tools/${name}/learned-aliases`, { token: publisher })).json<{ learned_aliases: { query: string; taught_by: { subject: string }[] }[] }>()
        .learned_aliases;

    it('keeps the alias alice taught through 12 junk misses of mallory, and caps mallory at what is left', async () => {
      const honest = 'convert pounds into dollars';
      expect(await miss('alice', honest, 'lookup_fx_rate')).toBe(true);
      const taught: string[] = [];
      for (let i = 0; taught.length < 12 && i < 60; i += 1) {
        const query = `zq${i}a zq${i}b zq${i}c`;
        if (await miss('mallory', query, 'lookup_fx_rate')) taught.push(query);
      }
      expect(taught).toHaveLength(12);
      const aliases = await learned('lookup_fx_rate');
      expect(aliases.map((a) => a.query)).toContain(honest);
      expect(aliases).toHaveLength(5);
      expect(aliases.filter((a) => a.taught_by.some((t) => t.subject === 'mallory'))).toHaveLength(4);
      // Mallory keeps its latest misses; its oldest went first.
      expect(aliases.map((a) => a.query)).toContain(taught.at(-1));
      expect(aliases.map((a) => a.query)).not.toContain(taught[0]);
    });
  });
});
