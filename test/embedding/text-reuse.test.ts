import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect, it } from 'vitest';

import { buildApp } from '../../src/app.js';
import { rowsOf } from '../../src/db/client.js';
import type { Embedder } from '../../src/embedding/provider.js';
import { call, testConfig, testDependencies } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

/** The hashing embedder, remembering every text the indexer asked it to encode. */
class CountingEmbedder implements Embedder {
  readonly model = 'test-hashing-64';
  private readonly inner = new HashingEmbedder();
  asked: string[] = [];

  embed(texts: string[]): Promise<number[][]> {
    this.asked.push(...texts);
    return this.inner.embed(texts);
  }

  /** The texts asked since the last call. */
  take(): string[] {
    return this.asked.splice(0).sort();
  }
}

/**
 * Through the HTTP API, with the app's own background indexer: a text whose vector is already
 * stored in the tenant is never encoded again, whichever tool or version stored it; another
 * tenant's vectors are never reused.
 */
forEachDatabase((db) => {
  const embedder = new CountingEmbedder();
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await buildApp({ ...testDependencies(testConfig(), db.database), embedder });
    await app.ready();
  });
  afterAll(() => app?.close());

  const tenant = uniqueTenant('reuse');
  const publish = async (method: 'POST' | 'PUT', url: string, body: Record<string, unknown>, as = tenant) => {
    const response = await call(app, method, url, { token: await token({ tenant: as, scopes: [PUBLISH] }), body });
    expect(response.statusCode, response.body).toBeLessThan(300);
    await app.indexer!.flush();
  };
  const v1 = toolDocument({ name: 'refund_invoice' });
  const vectorsOf = (name: string, as = tenant) =>
    rowsOf<{ ord: number; text_hash: string; embedding: string }>(
      db.database.db.execute(sql`
        select e.ord, e.text_hash, e.embedding::text as embedding from tool_embeddings e join tools t on t.id = e.tool_id
        where t.tenant_id = ${as} and t.name = ${name} and e.model = ${embedder.model} order by e.ord`),
    );

  it('encodes every text of a first version once', async () => {
    await publish('POST', '/v1/tools', v1);
    // Card, parameters, two aliases, one example.
    expect(embedder.take()).toHaveLength(5);
    expect(await vectorsOf('refund_invoice')).toHaveLength(5);
  });

  it('encodes nothing for a new version whose texts are unchanged, and stores its vectors', async () => {
    const before = await vectorsOf('refund_invoice');
    await publish('PUT', '/v1/tools/refund_invoice', { ...v1, version: '1.1.0', tags: ['billing', 'refunds'] });
    expect(embedder.take()).toEqual([]);
    expect(await vectorsOf('refund_invoice')).toEqual(before);
    const read = await call(app, 'GET', '/v1/tools/refund_invoice', { token: await token({ tenant, scopes: [PUBLISH] }) });
    expect(read.json()).toMatchObject({ version: '1.1.0', index_status: 'indexed' });
  });

  it('encodes only the changed text of a new version', async () => {
    await publish('PUT', '/v1/tools/refund_invoice', { ...v1, version: '1.2.0', examples: ['Refund invoice #2048, it was charged twice'] });
    expect(embedder.take()).toEqual(['Refund invoice #2048, it was charged twice']);
  });

  it('reuses another tool\'s vector for the same text in the tenant', async () => {
    await publish('POST', '/v1/tools', toolDocument({ name: 'refund_order', description: 'Refund a paid order.', examples: [] }));
    // Its aliases are refund_invoice's: only its card and parameter texts are new.
    const asked = embedder.take();
    expect(asked).toHaveLength(2);
    expect(asked.some((text) => text.includes('give money back') || text === 'refund my purchase')).toBe(false);
    const [first, second] = [await vectorsOf('refund_invoice'), await vectorsOf('refund_order')];
    expect(second.find((v) => v.text_hash === first[2]!.text_hash)?.embedding).toBe(first[2]!.embedding);
  });

  it('never reuses another tenant\'s vectors', async () => {
    const other = uniqueTenant('reuse-other');
    await publish('POST', '/v1/tools', v1, other);
    expect(embedder.take()).toHaveLength(5);
    expect(await vectorsOf('refund_invoice', other)).toHaveLength(5);
  });

  it('re-encodes texts whose vectors were marked stale (a model re-embed)', async () => {
    await db.database.db.execute(sql`update tool_embeddings set content_hash = '', text_hash = null where tenant_id = ${tenant}`);
    await app.indexer!.flush();
    // Both tools, every text, each distinct text once: 5 + 2 (the shared aliases once).
    expect(embedder.take()).toHaveLength(7);
  });
});
