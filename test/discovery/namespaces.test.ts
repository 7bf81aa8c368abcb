import { beforeAll, describe, expect, it } from 'vitest';

import { LocalEmbedder } from '../../src/embedding/local.js';
import { MCP_SERVER_TOOLS } from '../fixtures/mcp-server-tools.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { type DiscoverResponse, useDiscoveryApp } from './helpers.js';

let encoder: LocalEmbedder | undefined;
// Loaded before any leg's app is built (the legs' hooks run inside their own describe blocks).
beforeAll(async () => {
  encoder = await LocalEmbedder.load();
}, 60_000);

/**
 * Imported MCP tools share their server's prefix: a request that happens to use the prefix word
 * ("everything") must not pull the whole namespace ahead of the tool that does what it asks.
 * Real encoder, every database leg.
 */
forEachDatabase((db) => {
  // A generous embedding budget: on a loaded machine a timed-out query embedding would turn the search lexical.
  const ctx = useDiscoveryApp(db, () => encoder, { EMBEDDING_TIMEOUT_MS: '30000' });
  const tenant = uniqueTenant('namespaces');
  let caller = '';

  beforeAll(async () => {
    const publisher = await token({ tenant, scopes: [PUBLISH] });
    for (const body of MCP_SERVER_TOOLS) expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body })).statusCode).toBe(201);
    await ctx.flush();
    caller = await token({ tenant, scopes: [] });
  }, 60_000);

  const names = async (query: string) => {
    const response = await call(ctx.app, 'POST', '/v1/discover', { token: caller, body: { query, top_k: 3 } });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<DiscoverResponse>().tools.map((t) => t.name);
  };

  describe('POST /v1/discover over prefixed MCP tools', () => {
    it('sends "forget everything about Bob" to the memory deletion, not to the everything_ namespace', async () => {
      const shortlist = await names('forget everything about Bob');
      expect(shortlist.slice(0, 2).sort()).toEqual(['memory_delete_entities', 'memory_delete_observations']);
    });

    it('still finds a namespace tool by what it does', async () => {
      expect((await names('echo this message back to me'))[0]).toBe('everything_echo');
      expect((await names('add 2 and 3 together'))[0]).toBe('everything_get-sum');
      expect((await names('use everything to echo hello'))[0]).toBe('everything_echo');
    });
  });
});
