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
    it('never sends "forget everything about Bob" to the everything_ namespace', async () => {
      // The prefix word is the only word of the request any tool has, and it counts for nothing; no
      // tool stands out by what it does either, so the answer is "nothing fits", not the namespace.
      const result = await catalog.discover({ query: 'forget everything about Bob' });
      expect(result.tools.filter((t) => t.name.startsWith('everything_')).length).toBeLessThanOrEqual(1);
      expect(result.tools.length === 0 || result.low_confidence).toBe(true);
    });

    it('still finds a namespace tool by what it does', async () => {
      expect((await names('echo this message back to me'))[0]).toBe('everything_echo');
      expect((await names('add 2 and 3 together'))[0]).toBe('everything_get-sum');
      expect((await names('use everything to echo hello'))[0]).toBe('everything_echo');
    });
  });
});
