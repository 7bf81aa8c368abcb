import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { rowsOf } from '../../src/db/client.js';
import { type Embedder, EmbeddingRefused } from '../../src/embedding/provider.js';
import { reembed } from '../../src/embedding/reembed.js';
import { createServices } from '../../src/services.js';
import { ToolService } from '../../src/tools/service.js';
import { ToolValidator } from '../../src/tools/validation.js';
import { testConfig } from '../helpers/app.js';
import { databaseLegs, type TestDatabase } from '../helpers/databases.js';
import { FlakyEmbedder, HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';

describe('reembed (PGlite in-process)', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await databaseLegs()[0]!.open();
    const tools = new ToolService(database.database.db);
    const validator = new ToolValidator({ descriptionLength: 1024, summaryLength: 200, schemaDepth: 32 });
    for (const name of ['a_tool', 'b_tool', 'c_tool']) {
      const result = validator.validate(toolDocument({ name }));
      if (!result.ok) throw new Error('fixture invalid');
      await tools.register({ tenant: 'reembed', subject: null, scopes: [] }, result.document);
    }
  });
  afterAll(async () => database?.close());

  const quiet = { info: () => undefined, warn: () => undefined, debug: () => undefined };
  /** The indexer the CLI's reembed uses: the composition root's. */
  const indexerFor = (embedder: Embedder) => createServices(testConfig(), { database: database.database, embedder, log: quiet }).indexer!;
  const vectors = () => rowsOf<{ model: string; n: number }>(database.database.db.execute(sql`select model, count(*)::int as n from tool_embeddings group by model order by model`));

  it('rebuilds every active tool\'s vectors for the model, one per card text', async () => {
    const result = await reembed(database.database, indexerFor(new HashingEmbedder()), { purgeOtherModels: false });
    expect(result).toMatchObject({ model: 'test-hashing-64', tools: 3 });
    // Card + parameters + 2 aliases + 1 example per fixture tool.
    expect(await vectors()).toEqual([{ model: 'test-hashing-64', n: 15 }]);
  });

  it('drops other models\' vectors on request', async () => {
    await database.database.db.execute(sql`update tool_embeddings set model = 'old-model'`);
    await reembed(database.database, indexerFor(new HashingEmbedder()), { purgeOtherModels: true });
    expect(await vectors()).toEqual([{ model: 'test-hashing-64', n: 15 }]);
  });

  it('fails loudly when the embedder refuses every text (a wrong model name answered 400), keeping the previous vectors', async () => {
    const refusing: Embedder = {
      model: 'test-hashing-64',
      embed: async () => {
        throw new EmbeddingRefused('embedding endpoint refused the texts (400)');
      },
    };
    await expect(reembed(database.database, indexerFor(refusing), { purgeOtherModels: false })).rejects.toThrow('re-embedding failed: the embedder refused the texts of 3 tool(s)');
    expect(await vectors()).toEqual([{ model: 'test-hashing-64', n: 15 }]);
  });

  it('tries again the tools the embedder refused lately, once it answers (the indexer leaves them alone for an hour)', async () => {
    const [refused] = await rowsOf<{ n: number }>(database.database.db.execute(sql`select count(*)::int as n from embedding_failures where refused`));
    expect(refused!.n).toBe(3);
    const result = await reembed(database.database, indexerFor(new HashingEmbedder()), { purgeOtherModels: false });
    expect(result).toMatchObject({ model: 'test-hashing-64', tools: 3 });
  });

  it('fails loudly when the embedder does, keeping the previous vectors', async () => {
    await expect(reembed(database.database, indexerFor(new FlakyEmbedder()), { purgeOtherModels: false })).rejects.toThrow(/re-embedding failed/);
    expect(await vectors()).toEqual([{ model: 'test-hashing-64', n: 15 }]);
  });
});
