import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { rowsOf } from '../../src/db/client.js';
import { DEFAULT_INDEXER_OPTIONS, EmbeddingIndexer } from '../../src/embedding/indexer.js';
import type { Embedder } from '../../src/embedding/provider.js';
import { staleTools } from '../../src/embedding/repository.js';
import { ToolService } from '../../src/tools/service.js';
import { ToolValidator } from '../../src/tools/validation.js';
import { databaseLegs, type TestDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';

/** The indexer's sweep: batches in id order, each starting after the last tool the previous one did. */
describe('the indexer sweep (PGlite in-process)', () => {
  let database: TestDatabase;
  const tenant = 'sweep';
  const quiet = { info: () => undefined, warn: () => undefined };

  beforeAll(async () => {
    database = await databaseLegs()[0]!.open();
    const tools = new ToolService(database.database.db);
    const validator = new ToolValidator({ descriptionLength: 1024, summaryLength: 200, schemaDepth: 32 });
    for (let i = 0; i < 7; i += 1) {
      const result = validator.validate(toolDocument({ name: `sweep_tool_${i}`, aliases: [], examples: [] }));
      if (!result.ok) throw new Error('fixture invalid');
      await tools.register({ tenant, subject: null, scopes: [] }, result.document);
    }
  });
  afterAll(async () => database?.close());

  it('finds only stale tools after the id it is given, in id order', async () => {
    const ids = (await rowsOf<{ id: number }>(database.database.db.execute(sql`select id::int as id from tools where tenant_id = ${tenant} order by id`))).map((r) => r.id);
    expect((await staleTools(database.database.db, 'test-hashing-64', 100)).map((t) => t.id)).toEqual(ids);
    expect((await staleTools(database.database.db, 'test-hashing-64', 3, ids[1])).map((t) => t.id)).toEqual(ids.slice(2, 5));
  });

  it('embeds every stale tool once, a batch at a time, in one pass', async () => {
    const embedder = new HashingEmbedder();
    const indexer = new EmbeddingIndexer(database.database.db, embedder, quiet, {
      ...DEFAULT_INDEXER_OPTIONS,
      batchSize: 2,
      indexBuild: { concurrently: false, withSession: database.database.withSession, maxMemoryMb: 64 },
    });
    expect((await staleTools(database.database.db, 'test-hashing-64', 100)).length).toBe(7);
    await indexer.flush();
    expect(embedder.calls).toBe(4); // 7 tools, 2 a batch
    expect((await staleTools(database.database.db, 'another-model', 100)).length).toBe(7);
    expect(await staleTools(database.database.db, 'test-hashing-64', 100)).toEqual([]);
    const [vectors] = await rowsOf<{ n: number }>(database.database.db.execute(sql`select count(distinct tool_id)::int as n from tool_embeddings where tenant_id = ${tenant}`));
    expect(vectors!.n).toBe(7);
  });

  it('sweeps again what changed behind its pass before it builds the vector index', async () => {
    const tools = new ToolService(database.database.db);
    const validator = new ToolValidator({ descriptionLength: 1024, summaryLength: 200, schemaDepth: 32 });
    const doc = (i: number, description = `Late tool number ${i} looks things up.`, version = '1.0.0') => {
      const result = validator.validate(toolDocument({ name: `late_tool_${i}`, version, description, aliases: [], examples: [] }));
      if (!result.ok) throw new Error('fixture invalid');
      return result.document;
    };
    const publisher = { tenant: 'sweep-late', subject: null, scopes: [] };
    for (let i = 0; i < 3; i += 1) await tools.register(publisher, doc(i));
    const events: string[] = [];
    const inner = new HashingEmbedder();
    const embedder: Embedder = {
      model: inner.model,
      embed: async (texts) => {
        events.push('embed');
        // While the pass does its second batch, the first batch's tool changes: behind the pass.
        if (events.length === 2) {
          await tools.replace(publisher, 'late_tool_0', doc(0, 'Late tool number 0 now looks other things up.', '1.1.0'), undefined);
          indexer.notify();
        }
        return inner.embed(texts);
      },
    };
    const indexer = new EmbeddingIndexer(database.database.db, embedder, quiet, {
      ...DEFAULT_INDEXER_OPTIONS,
      batchSize: 2,
      vectorIndexMinTools: 1,
      indexBuild: {
        concurrently: false,
        maxMemoryMb: 64,
        withSession: (fn) =>
          database.database.withSession((session) => {
            events.push('build');
            return fn(session);
          }),
      },
    });
    await indexer.flush();
    expect(indexer.status).toBe('ok');
    expect(events).toEqual(['embed', 'embed', 'embed', 'build']);
    expect(await staleTools(database.database.db, inner.model, 100)).toEqual([]);
  });
});
