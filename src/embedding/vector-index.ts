/**
 * HNSW indexes over tool vectors. The vector column holds every model's vectors, of any length,
 * and HNSW needs a fixed dimension: so each model gets a partial expression index,
 * `(embedding::vector(dims)) WHERE model = '<model>'`, created once vectors of that model exist.
 * Discovery uses it for large catalogs (DiscoveryService, VECTOR_INDEX_MIN_TOOLS); its query
 * repeats the same expression and model literal so the planner can match the index, and stays
 * correct (an exact ordered scan) where the index does not exist. The indexer builds it once some
 * tenant's catalog is large enough for discovery to use it.
 */
import { createHash } from 'node:crypto';

import { type SQL, sql } from 'drizzle-orm';

import { type Db, rowsOf } from '../db/client.js';

/** pgvector's HNSW limit for `vector`; longer vectors are searched exactly. */
export const HNSW_MAX_DIMENSIONS = 2000;

/** A SQL string literal (standard_conforming_strings: only quotes need doubling). */
export function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** The fixed-dimension vector type of an index expression. */
export function vectorType(dims: number): SQL {
  if (!Number.isInteger(dims) || dims < 1 || dims > 16_000) throw new RangeError(`invalid vector dimension ${dims}`);
  return sql.raw(`vector(${dims})`);
}

/** Index name for a model and dimension: stable, short, safe whatever the model is called. */
export function vectorIndexName(model: string, dims: number): string {
  return `tool_embeddings_hnsw_${createHash('sha256').update(model).digest('hex').slice(0, 12)}_${dims}`;
}

/** Active tools of the largest tenant: what decides whether any caller may use the index. */
export async function largestCatalog(db: Db): Promise<number> {
  const [row] = await rowsOf<{ tools: number }>(
    db.execute(sql`select count(*)::int as tools from tools where status = 'active' group by tenant_id order by 1 desc limit 1`),
  );
  return row?.tools ?? 0;
}

/**
 * Creates the model's HNSW index if its vectors exist and it does not. Returns whether an index
 * now exists. On PostgreSQL the build is CONCURRENTLY, so registrations continue meanwhile; on
 * PGlite (one connection) it blocks until built, which happens once per model.
 */
export async function ensureVectorIndex(db: Db, model: string, concurrently: boolean, log: { info: (obj: object, msg: string) => void }): Promise<boolean> {
  const [sample] = await rowsOf<{ dims: number; vectors: number }>(
    db.execute(sql`select dims, (select count(*) from tool_embeddings where model = ${model})::int as vectors from tool_embeddings where model = ${model} limit 1`),
  );
  if (!sample || sample.dims > HNSW_MAX_DIMENSIONS) return false;
  const name = vectorIndexName(model, sample.dims);
  const [existing] = await rowsOf<{ valid: boolean }>(
    db.execute(sql`select i.indisvalid as valid from pg_class c join pg_index i on i.indexrelid = c.oid where c.relname = ${name}`),
  );
  if (existing?.valid) return true;
  // An interrupted concurrent build leaves an invalid index behind: drop it and start again.
  if (existing) await db.execute(sql.raw(`drop index ${concurrently ? 'concurrently ' : ''}if exists ${name}`));
  const started = performance.now();
  await db.execute(sql`
    create index ${sql.raw(concurrently ? 'concurrently ' : '')}if not exists ${sql.raw(name)} on tool_embeddings
    using hnsw ((embedding::${vectorType(sample.dims)}) vector_cosine_ops)
    where model = ${sql.raw(literal(model))}`);
  log.info({ model, dims: sample.dims, vectors: sample.vectors, ms: Math.round(performance.now() - started) }, 'built the vector index');
  return true;
}
