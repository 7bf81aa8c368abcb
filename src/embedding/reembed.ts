import { sql } from 'drizzle-orm';

import { type Database, rowsOf } from '../db/client.js';
import type { EmbeddingIndexer } from './indexer.js';
import { markStale } from './repository.js';

export interface ReembedResult {
  model: string;
  tools: number;
  seconds: number;
}

/**
 * Rebuilds every active tool's vectors for the embedder's model (after a model change or an
 * upgrade of the card texts) with the services' indexer (createServices); optionally drops other
 * models' vectors. Fails when the embedder does, leaving the previous vectors in place.
 */
export async function reembed(database: Database, indexer: EmbeddingIndexer, options: { purgeOtherModels: boolean }): Promise<ReembedResult> {
  const started = performance.now();
  const model = indexer.model;
  if (options.purgeOtherModels) await database.db.execute(sql`delete from tool_embeddings where model <> ${model}`);
  await markStale(database.db, model);
  // Failures surface through indexer.status, checked below.
  await indexer.flush();
  if (indexer.status !== 'ok') throw new Error(`re-embedding failed: ${indexer.status}`);
  const [row] = await rowsOf<{ tools: number }>(
    database.db.execute(sql`select count(distinct tool_id)::int as tools from tool_embeddings where model = ${model}`),
  );
  return { model, tools: row?.tools ?? 0, seconds: (performance.now() - started) / 1000 };
}
