import { sql } from 'drizzle-orm';
import { toSql } from 'pgvector';

import { type Db, rowsOf } from '../db/client.js';
import { tools } from '../db/schema.js';
import { CARD_TEXTS_VERSION, type EmbeddableCard } from './card-texts.js';
import { literal } from './vector-index.js';

export interface StaleTool extends EmbeddableCard {
  id: number;
  /** Identity of the embedded texts: content hash plus learned aliases. */
  stamp: string;
}

// What the vectors were computed from: the document, the learned aliases and the card texts' version.
const STAMP = sql.raw(`md5(t.content_hash || t.search_learned || ${literal(CARD_TEXTS_VERSION)})`);

/** Active tools whose vectors for `model` are missing or older than their content. */
export async function staleTools(db: Db, model: string, limit: number): Promise<StaleTool[]> {
  const rows = await rowsOf<{ id: number | string; name: string; summary: string; description: string; aliases: string[]; examples: string[]; search_params: string; search_learned: string; stamp: string }>(
    db.execute(sql`
    select t.id, t.name, t.summary, t.description, t.aliases, t.examples, t.search_params, t.search_learned, ${STAMP} as stamp
    from ${tools} t
    left join tool_embeddings e on e.tool_id = t.id and e.model = ${model} and e.ord = 0
    where t.status = 'active' and (e.tool_id is null or e.content_hash <> ${STAMP})
    order by t.id
    limit ${limit}`),
  );
  return rows.map((r) => ({
    id: Number(r.id),
    name: r.name,
    summary: r.summary,
    description: r.description,
    aliases: r.aliases,
    examples: r.examples,
    parameters: r.search_params,
    learned: r.search_learned === '' ? [] : r.search_learned.split('\n'),
    stamp: r.stamp,
  }));
}

/**
 * Replaces a tool's vectors for `model` in one transaction. Stamped with what the texts came
 * from, so a tool edited meanwhile stays stale and is embedded again.
 */
export async function saveEmbeddings(db: Db, toolId: number, model: string, stamp: string, vectors: number[][]): Promise<void> {
  await db.transaction(async (tx) => {
    // The tool may have been deleted or changed since it was read: only stamp the content we embedded.
    const [current] = await rowsOf<{ stamp: string }>(tx.execute(sql`select ${STAMP} as stamp from ${tools} t where t.id = ${toolId}`));
    if (!current || current.stamp !== stamp) return;
    await tx.execute(sql`delete from tool_embeddings where tool_id = ${toolId} and model = ${model}`);
    for (const [ord, vector] of vectors.entries()) {
      await tx.execute(sql`
        insert into tool_embeddings (tool_id, model, ord, dims, content_hash, embedding)
        values (${toolId}, ${model}, ${ord}, ${vector.length}, ${stamp}, ${toSql(vector) as string}::vector)`);
    }
  });
}

/**
 * Marks every vector of `model` stale so the indexer replaces them tool by tool; until it does,
 * the old vectors keep serving (nothing is lost if re-embedding fails half-way).
 */
export async function markStale(db: Db, model: string): Promise<void> {
  await db.execute(sql`update tool_embeddings set content_hash = '' where model = ${model}`);
}
