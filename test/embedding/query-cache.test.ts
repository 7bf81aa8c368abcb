import { describe, expect, it } from 'vitest';

import type { EmbedOptions } from '../../src/embedding/provider.js';
import { QueryEmbeddings } from '../../src/embedding/query-cache.js';

/** An embedder that records what each call asked for. */
function recording(hang = false) {
  const calls: { texts: string[]; options: EmbedOptions | undefined }[] = [];
  return {
    calls,
    embedder: {
      model: 'recording',
      embed: async (texts: string[], options?: EmbedOptions) => {
        calls.push({ texts, options });
        if (hang) return new Promise<number[][]>(() => undefined);
        return texts.map((t) => [t.length, 1]);
      },
    },
  };
}

describe('QueryEmbeddings', () => {
  it("asks the embedder for a query on the tenant's behalf, so its encoder can take tenants in turns", async () => {
    const { calls, embedder } = recording();
    const queries = new QueryEmbeddings(embedder, 1000);
    expect(await queries.embed('tenant-a', 'refund an order')).toEqual([15, 1]);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.options).toMatchObject({ purpose: 'query', tenant: 'tenant-a' });
    expect(calls[0]!.options?.signal).toBeInstanceOf(AbortSignal);
  });

  it("caches per tenant: another tenant's identical request is encoded for it, not served from the first's entry", async () => {
    const { calls, embedder } = recording();
    const queries = new QueryEmbeddings(embedder, 1000);
    await queries.embed('tenant-a', 'refund an order');
    await queries.embed('tenant-a', 'refund an order');
    expect(queries.has('tenant-a', 'refund an order')).toBe(true);
    expect(queries.has('tenant-b', 'refund an order')).toBe(false);
    await queries.embed('tenant-b', 'refund an order');
    expect(calls.map((c) => c.options?.tenant)).toEqual(['tenant-a', 'tenant-b']);
    expect(queries.stats).toEqual({ hits: 1, misses: 2, failures: 0 });
  });

  it('gives up after its time budget: the caller answers lexically', async () => {
    const { embedder } = recording(true);
    const queries = new QueryEmbeddings(embedder, 50);
    expect(await queries.embed('tenant-a', 'refund an order')).toBeUndefined();
    expect(queries.stats.failures).toBe(1);
  });
});
