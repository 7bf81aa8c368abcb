import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { rowsOf } from '../../src/db/client.js';
import { DEFAULT_INDEXER_OPTIONS, EmbeddingIndexer } from '../../src/embedding/indexer.js';
import { staleTools, toolsWithoutCurrentVectors } from '../../src/embedding/repository.js';
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
    expect(await toolsWithoutCurrentVectors(database.database.db, 'test-hashing-64')).toBe(7);
    await indexer.flush();
    expect(embedder.calls).toBe(4); // 7 tools, 2 a batch
    expect(await toolsWithoutCurrentVectors(database.database.db, 'test-hashing-64')).toBe(0);
    expect(await toolsWithoutCurrentVectors(database.database.db, 'another-model')).toBe(7);
    expect(await staleTools(database.database.db, 'test-hashing-64', 100)).toEqual([]);
    const [vectors] = await rowsOf<{ n: number }>(database.database.db.execute(sql`select count(distinct tool_id)::int as n from tool_embeddings where tenant_id = ${tenant}`));
    expect(vectors!.n).toBe(7);
  });
});
