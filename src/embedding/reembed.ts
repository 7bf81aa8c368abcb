import { sql } from 'drizzle-orm';

import { type Database, rowsOf } from '../db/client.js';
import type { EmbeddingIndexer } from './indexer.js';
import { indexCounts, markStale } from './repository.js';

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
  // Every tool is tried again, those the embedder refused lately too (the endpoint may be fixed).
  await database.db.execute(sql`delete from embedding_failures where model = ${model}`);
  // Failures surface through indexer.status, checked below.
  await indexer.flush();
  if (indexer.status !== 'ok') throw new Error(`re-embedding failed: ${indexer.status}`);
  // Tools whose texts the embedder refused fail alone and the pass goes on (an endpoint that
  // refuses everything, a wrong model name, fails them all): that is no success either.
  const { failed } = await indexCounts(database.db, model);
  if (failed > 0) throw new Error(`re-embedding failed: the embedder refused the texts of ${failed} tool(s); see embedding_failures`);
  const [row] = await rowsOf<{ tools: number }>(
    database.db.execute(sql`select count(distinct tool_id)::int as tools from tool_embeddings where model = ${model}`),
  );
  return { model, tools: row?.tools ?? 0, seconds: (performance.now() - started) / 1000 };
}
