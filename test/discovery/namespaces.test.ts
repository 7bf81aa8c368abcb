import { describe, expect, it } from 'vitest';

import { MCP_SERVER_TOOLS } from '../fixtures/mcp-server-tools.js';
import { forEachDatabase } from '../helpers/databases.js';
import { useEncoderCatalog } from './helpers.js';

/**
 * Imported MCP tools share their server's prefix: a request that happens to use the prefix word
 * ("everything") must not pull the whole namespace ahead of the tool that does what it asks.
 * Real encoder, every database leg.
 */
forEachDatabase((db) => {
  const catalog = useEncoderCatalog(db, 'namespaces', MCP_SERVER_TOOLS);
  const names = async (query: string) => (await catalog.discover({ query })).tools.map((t) => t.name);

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
