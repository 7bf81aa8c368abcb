import { sql } from 'drizzle-orm';

import { type Database, rowsOf } from '../db/client.js';
import { DEFAULT_INDEXER_OPTIONS, EmbeddingIndexer } from './indexer.js';
import type { Embedder } from './provider.js';
import { markStale } from './repository.js';

export interface ReembedResult {
  model: string;
  tools: number;
  seconds: number;
}

/**
 * Rebuilds every active tool's vectors for the embedder's model (after a model change or an
 * upgrade of the card texts); optionally drops other models' vectors. Fails when the embedder
 * does, leaving the previous vectors in place.
 */
export async function reembed(database: Database, embedder: Embedder, options: { purgeOtherModels: boolean; vectorIndexMinTools?: number }): Promise<ReembedResult> {
  const started = performance.now();
  if (options.purgeOtherModels) await database.db.execute(sql`delete from tool_embeddings where model <> ${embedder.model}`);
  await markStale(database.db, embedder.model);
  // Failures surface through indexer.status, checked below.
  const indexer = new EmbeddingIndexer(
    database.db,
    embedder,
    { info: () => undefined, warn: () => undefined },
    {
      ...DEFAULT_INDEXER_OPTIONS,
      concurrentIndexBuild: database.kind === 'postgres',
      vectorIndexMinTools: options.vectorIndexMinTools ?? DEFAULT_INDEXER_OPTIONS.vectorIndexMinTools,
    },
  );
  await indexer.flush();
  if (indexer.status !== 'ok') throw new Error(`re-embedding failed: ${indexer.status}`);
  const [row] = await rowsOf<{ tools: number }>(
    database.db.execute(sql`select count(distinct tool_id)::int as tools from tool_embeddings where model = ${embedder.model}`),
  );
  return { model: embedder.model, tools: row?.tools ?? 0, seconds: (performance.now() - started) / 1000 };
}
