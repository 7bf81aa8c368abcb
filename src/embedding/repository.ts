import { eq, sql } from 'drizzle-orm';
import { toSql } from 'pgvector';

import { type Db, rowsOf } from '../db/client.js';
import { tools } from '../db/schema.js';
import type { EmbeddableCard } from './card-texts.js';

export interface StaleTool extends EmbeddableCard {
  id: number;
  contentHash: string;
}

/** Active tools whose vectors for `model` are missing or older than their content. */
export async function staleTools(db: Db, model: string, limit: number): Promise<StaleTool[]> {
  const rows = await rowsOf<{ id: number | string; name: string; summary: string; description: string; aliases: string[]; examples: string[]; content_hash: string }>(
    db.execute(sql`
    select t.id, t.name, t.summary, t.description, t.aliases, t.examples, t.content_hash
    from ${tools} t
    left join tool_embeddings e on e.tool_id = t.id and e.model = ${model} and e.ord = 0
    where t.status = 'active' and (e.tool_id is null or e.content_hash <> t.content_hash)
    order by t.id
    limit ${limit}`),
  );
  return rows.map((r) => ({ ...r, id: Number(r.id), contentHash: r.content_hash }));
}

/**
 * Replaces a tool's vectors for `model` in one transaction. Stamped with the content hash the
 * texts came from, so a tool edited meanwhile stays stale and is embedded again.
 */
export async function saveEmbeddings(db: Db, toolId: number, model: string, contentHash: string, vectors: number[][]): Promise<void> {
  await db.transaction(async (tx) => {
    // The tool may have been deleted or changed since it was read: only stamp the content we embedded.
    const [current] = await tx.select({ hash: tools.contentHash }).from(tools).where(eq(tools.id, toolId));
    if (!current || current.hash !== contentHash) return;
    await tx.execute(sql`delete from tool_embeddings where tool_id = ${toolId} and model = ${model}`);
    for (const [ord, vector] of vectors.entries()) {
      await tx.execute(sql`
        insert into tool_embeddings (tool_id, model, ord, dims, content_hash, embedding)
        values (${toolId}, ${model}, ${ord}, ${vector.length}, ${contentHash}, ${toSql(vector) as string}::vector)`);
    }
  });
}

/** Drops every vector of `model` (the reembed command's first step). */
export async function clearEmbeddings(db: Db, model: string): Promise<void> {
  await db.execute(sql`delete from tool_embeddings where model = ${model}`);
}
