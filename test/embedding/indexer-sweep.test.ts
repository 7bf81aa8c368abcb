import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it } from 'vitest';

import { rowsOf } from '../../src/db/client.js';
import { DEFAULT_INDEXER_OPTIONS, EmbeddingIndexer } from '../../src/embedding/indexer.js';
import { type Embedder, EmbeddingRefused } from '../../src/embedding/provider.js';
import { staleTools, staleToolsInTurns } from '../../src/embedding/repository.js';
import { ToolService } from '../../src/tools/service.js';
import { ToolValidator } from '../../src/tools/validation.js';
import { type DatabaseHandle, forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';

const quiet = { info: () => undefined, warn: () => undefined };
const validator = new ToolValidator({ descriptionLength: 1024, summaryLength: 200, schemaDepth: 32 });

/** `count` tools named `<prefix>_<i>` published in `tenant`. */
async function publish(db: DatabaseHandle, tenant: string, prefix: string, count: number): Promise<void> {
  const tools = new ToolService(db.database.db);
  for (let i = 0; i < count; i += 1) {
    const result = validator.validate(toolDocument({ name: `${prefix}_${i}`, description: `Tool ${prefix} number ${i} looks things up.`, aliases: [], examples: [] }));
    if (!result.ok) throw new Error('fixture invalid');
    await tools.register({ tenant, subject: null, scopes: [] }, result.document);
  }
}

/**
 * Refuses any request holding a text with "poisoned", as an endpoint refuses a text over its
 * model's length; embeds the others. Counts every request's texts, and the refusals.
 */
class RefusingEmbedder implements Embedder {
  readonly requests: number[] = [];
  refusals = 0;
  private readonly inner = new HashingEmbedder();
  constructor(readonly model: string) {}

  async embed(texts: string[]): Promise<number[][]> {
    this.requests.push(texts.length);
    if (texts.some((text) => text.includes('poisoned'))) {
      this.refusals += 1;
      throw new EmbeddingRefused('embedding endpoint refused the texts (413)');
    }
    return this.inner.embed(texts);
  }
}

/** A tool whose texts a RefusingEmbedder refuses, published in `tenant`. */
async function publishPoisoned(db: DatabaseHandle, tenant: string, name: string): Promise<void> {
  const poisoned = validator.validate(toolDocument({ name, description: `A poisoned description: ${name}.`, aliases: [], examples: [] }));
  if (!poisoned.ok) throw new Error('fixture invalid');
  await new ToolService(db.database.db).register({ tenant, subject: null, scopes: [] }, poisoned.document);
}

/** The indexer's sweep: batches in id order, each after the last tool the previous one did, and now and then one in turns across tenants. */
forEachDatabase((db) => describe('the indexer sweep', () => {
  let database: DatabaseHandle['current'];
  const tenant = 'sweep';

  beforeAll(async () => {
    database = db.current;
    const tools = new ToolService(database.database.db);
    const validator = new ToolValidator({ descriptionLength: 1024, summaryLength: 200, schemaDepth: 32 });
    for (let i = 0; i < 7; i += 1) {
      const result = validator.validate(toolDocument({ name: `sweep_tool_${i}`, aliases: [], examples: [] }));
      if (!result.ok) throw new Error('fixture invalid');
      await tools.register({ tenant, subject: null, scopes: [] }, result.document);
    }
  });

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
  it("takes turns across tenants: one tenant's import does not hold back another tenant's new tool", async () => {
    await publish(db, 'sweep-bulk', 'bulk', 12);
    await publish(db, 'sweep-small', 'small', 1); // published after the whole import: the highest id
    const calls: string[][] = [];
    const inner = new HashingEmbedder();
    const embedder: Embedder = {
      model: inner.model,
      embed: async (texts) => {
        calls.push(texts.map((text) => /^(\w+ \d+): /.exec(text)?.[1] ?? text)); // the card and parameter texts open with the tool's name words
        return inner.embed(texts);
      },
    };
    const indexer = new EmbeddingIndexer(database.database.db, embedder, quiet, {
      ...DEFAULT_INDEXER_OPTIONS,
      batchSize: 4,
      indexBuild: { concurrently: false, withSession: database.database.withSession, maxMemoryMb: 64 },
    });
    const inTurns = await staleToolsInTurns(database.database.db, inner.model, 4);
    expect(inTurns.map((t) => t.name)).toEqual(['bulk_0', 'small_0', 'bulk_1', 'bulk_2']);
    expect(inTurns.map((t) => t.tenantId)).toEqual(['sweep-bulk', 'sweep-small', 'sweep-bulk', 'sweep-bulk']);
    await indexer.flush();
    expect(indexer.status).toBe('ok');
    // The pass's first batch goes in turns: the small tenant's tool is in it, then the import in id order.
    expect([...new Set(calls[0])]).toEqual(['bulk 0', 'small 0', 'bulk 1', 'bulk 2']);
    expect(calls.length).toBe(4); // 13 tools, 4 a batch, each once
    expect(new Set(calls.flat()).size).toBe(13);
    expect(await staleTools(database.database.db, inner.model, 100)).toEqual([]);
  });
  it('ends its pass with every tool embedded once when every batch goes in turns', async () => {
    const inner = new HashingEmbedder();
    const embedder: Embedder = { model: 'turns-only-model', embed: (texts) => inner.embed(texts) };
    const stale = (await staleTools(database.database.db, embedder.model, 1000)).length;
    expect(stale).toBeGreaterThan(8);
    // retryMs 0: every batch is taken in turns across tenants, none in id order.
    const indexer = new EmbeddingIndexer(database.database.db, embedder, quiet, {
      ...DEFAULT_INDEXER_OPTIONS,
      batchSize: 4,
      retryMs: 0,
      indexBuild: { concurrently: false, withSession: database.database.withSession, maxMemoryMb: 64 },
    });
    await indexer.flush();
    expect(indexer.status).toBe('ok');
    expect(inner.calls).toBe(Math.ceil(stale / 4));
    expect(await staleTools(database.database.db, embedder.model, 1000)).toEqual([]);
  });
  it('skips its periodic pass while nothing was written since a pass found nothing stale, and wakes on any write', async () => {
    const inner = new HashingEmbedder();
    const embedder: Embedder = { model: 'quiet-model', embed: (texts) => inner.embed(texts) };
    const indexer = new EmbeddingIndexer(database.database.db, embedder, quiet, {
      ...DEFAULT_INDEXER_OPTIONS,
      indexBuild: { concurrently: false, withSession: database.database.withSession, maxMemoryMb: 64 },
    });
    await indexer.flush(); // embeds everything
    await indexer.flush(); // finds nothing stale: quiet from here
    const calls = inner.calls;
    // A vector removed behind the revision counters' back (triggers off): a sweep would find it, a skipped one cannot.
    await database.database.db.transaction(async (tx) => {
      await tx.execute(sql`set local session_replication_role = replica`);
      await tx.execute(sql`delete from tool_embeddings where model = 'quiet-model' and tool_id = (select min(id) from tools where tenant_id = ${tenant})`);
    });
    await indexer.flush();
    expect(inner.calls).toBe(calls);
    expect(await staleTools(database.database.db, embedder.model, 100)).toHaveLength(1);
    // Any write bumps a revision: the next pass runs and finds both.
    await publish(db, 'sweep-quiet', 'quiet', 1);
    await indexer.flush();
    expect(inner.calls).toBe(calls + 1);
    expect(await staleTools(database.database.db, embedder.model, 100)).toEqual([]);
  });
  it("embeds every other tool when the embedder refuses one tool's text, and fails only that tool", async () => {
    const embedder = new RefusingEmbedder('refusing-model');
    const batches = embedder.requests;
    await publishPoisoned(db, 'sweep-refused-a', 'poisoned_tool');
    await publish(db, 'sweep-refused-b', 'refused_b', 3);
    const indexer = new EmbeddingIndexer(database.database.db, embedder, quiet, {
      ...DEFAULT_INDEXER_OPTIONS,
      batchSize: 64,
      indexBuild: { concurrently: false, withSession: database.database.withSession, maxMemoryMb: 64 },
    });
    await indexer.flush();
    expect(indexer.status).toBe('ok');
    // Only the poisoned tool is left stale, and it is marked failed; every other tenant's tool has its vectors.
    expect((await staleTools(database.database.db, embedder.model, 1000)).map((t) => t.name)).toEqual(['poisoned_tool']);
    const [failed] = await rowsOf<{ n: number }>(database.database.db.execute(sql`select count(*)::int as n from embedding_failures where model = 'refusing-model'`));
    expect(failed!.n).toBe(1);
    expect(batches.length).toBeGreaterThan(2);
    const [refused] = await rowsOf<{ refused: boolean }>(database.database.db.execute(sql`select refused from embedding_failures where model = 'refusing-model'`));
    expect(refused!.refused).toBe(true);
    // The passes after it leave its unchanged content alone: the same texts would be refused again.
    const sent = batches.length;
    await publish(db, 'sweep-refused-b', 'refused_later', 1);
    await indexer.flush();
    await indexer.flush();
    expect(indexer.status).toBe('ok');
    expect(batches.length).toBe(sent + 1); // the new tool's batch alone
    // New content is tried at once (and refused again here).
    const changed = validator.validate(toolDocument({ name: 'poisoned_tool', version: '1.0.1', description: 'A poisoned description, edited.', aliases: [], examples: [] }));
    if (!changed.ok) throw new Error('fixture invalid');
    await new ToolService(database.database.db).replace({ tenant: 'sweep-refused-a', subject: null, scopes: [] }, 'poisoned_tool', changed.document, undefined);
    await indexer.flush();
    expect(batches.length).toBe(sent + 2);
    // A restart (a new indexer) tries once what was refused before it started: the endpoint may be fixed.
    const restarted = new EmbeddingIndexer(database.database.db, embedder, quiet, {
      ...DEFAULT_INDEXER_OPTIONS,
      indexBuild: { concurrently: false, withSession: database.database.withSession, maxMemoryMb: 64 },
    });
    await restarted.flush();
    expect(restarted.status).toBe('ok');
    expect(batches.length).toBe(sent + 3);
    await restarted.flush();
    expect(batches.length).toBe(sent + 3);
  });

  /** An indexer of `embedder` running its periodic pass every 20 ms. */
  const running = (embedder: Embedder, refusedRetryMs = DEFAULT_INDEXER_OPTIONS.refusedRetryMs): EmbeddingIndexer => {
    const indexer = new EmbeddingIndexer(database.database.db, embedder, quiet, {
      ...DEFAULT_INDEXER_OPTIONS,
      retryMs: 20,
      refusedRetryMs,
      indexBuild: { concurrently: false, withSession: database.database.withSession, maxMemoryMb: 64 },
    });
    indexer.start();
    return indexer;
  };

  it('keeps its periodic pass quiet once only refused tools are left', async () => {
    const embedder = new RefusingEmbedder('refusing-periodic-model');
    await publishPoisoned(db, 'sweep-refused-periodic', 'poisoned_periodic');
    const indexer = running(embedder);
    try {
      await indexer.flush();
      const afterFirstPass = embedder.refusals;
      expect(afterFirstPass).toBeGreaterThan(0);
      // Fifteen periods: each pass would send the refused tool again.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await indexer.flush();
      expect(embedder.refusals).toBe(afterFirstPass);
    } finally {
      await indexer.stop();
    }
  });

  it('tries a refused tool again once its hold is over, with nothing written meanwhile', async () => {
    const embedder = new RefusingEmbedder('refusing-expiry-model');
    await publishPoisoned(db, 'sweep-refused-expiring', 'poisoned_expiring');
    const indexer = running(embedder, 150);
    try {
      await indexer.flush();
      const afterFirstPass = embedder.refusals;
      expect(afterFirstPass).toBeGreaterThan(0);
      const deadline = Date.now() + 10_000;
      while (embedder.refusals === afterFirstPass && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(embedder.refusals).toBeGreaterThan(afterFirstPass);
    } finally {
      await indexer.stop();
    }
  });
}));
