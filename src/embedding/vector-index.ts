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

import { type Database, type Db, rowsOf } from '../db/client.js';

/** pgvector's HNSW limit for `vector`; longer vectors are searched exactly. */
const HNSW_MAX_DIMENSIONS = 2000;

/** A SQL string literal (standard_conforming_strings: only quotes need doubling). */
export function literal(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** The fixed-dimension vector type of an index expression, as SQL text. */
function vectorTypeName(dims: number): string {
  if (!Number.isInteger(dims) || dims < 1 || dims > 16_000) throw new RangeError(`invalid vector dimension ${dims}`);
  return `vector(${dims})`;
}

/** The fixed-dimension vector type of an index expression. */
export function vectorType(dims: number): SQL {
  return sql.raw(vectorTypeName(dims));
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

/** How the HNSW index is built: on which connection, whether concurrently, with how much memory. */
export interface IndexBuild {
  /** CREATE INDEX CONCURRENTLY (PostgreSQL; see Database.concurrentIndexBuild). */
  concurrently: boolean;
  withSession: Database['withSession'];
  /** The most `maintenance_work_mem` the build may ask for, MiB (VECTOR_INDEX_BUILD_MEMORY_MB). */
  maxMemoryMb: number;
}

/** An index build under way: whether it holds the database (PGlite) and since when (epoch ms). */
export interface BuildInProgress {
  blocking: boolean;
  since: number;
}

/** PostgreSQL's default maintenance_work_mem, MiB: the build never asks for less. */
const DEFAULT_BUILD_MEMORY_MB = 64;

/**
 * The maintenance_work_mem an HNSW build of `vectors` vectors needs to keep its graph in memory,
 * MiB, within [64, maxMb]. pgvector's in-memory graph takes about the vector plus 800 bytes of
 * neighbour lists per element (measured: 28,369 vectors of 384 dimensions filled 64 MiB), and once
 * it no longer fits the build goes on on disk, many times slower: 200,000 such vectors built in 2
 * minutes with enough memory and had done 32,000 after 4 minutes with the default 64 MiB. Sized to
 * the catalog rather than set to the maximum, because a parallel build reserves its whole
 * maintenance_work_mem in shared memory up front.
 */
export function indexBuildMemoryMb(vectors: number, dims: number, maxMb: number): number {
  const needed = Math.ceil((vectors * (dims * 4 + 800) * 1.25) / 2 ** 20);
  return Math.max(DEFAULT_BUILD_MEMORY_MB, Math.min(maxMb, needed));
}

/**
 * Creates the model's HNSW index if its vectors exist and it does not. Returns whether an index
 * now exists. On PostgreSQL the build is CONCURRENTLY, so registrations continue meanwhile; on
 * PGlite (one connection) it blocks until built, which happens once per model (measured: 14 s for
 * 9,037 real card vectors, 85 s for 15,000 random ones). `onBuild` hears when a build starts and ends.
 */
export async function ensureVectorIndex(
  db: Db,
  model: string,
  build: IndexBuild,
  log: { info: (obj: object, msg: string) => void },
  onBuild: (progress: BuildInProgress | undefined) => void = () => undefined,
): Promise<boolean> {
  const [sample] = await rowsOf<{ dims: number; vectors: number }>(
    db.execute(sql`select dims, (select count(*) from tool_embeddings where model = ${model})::int as vectors from tool_embeddings where model = ${model} limit 1`),
  );
  if (!sample || sample.dims > HNSW_MAX_DIMENSIONS) return false;
  const name = vectorIndexName(model, sample.dims);
  const [existing] = await rowsOf<{ valid: boolean }>(
    db.execute(sql`select i.indisvalid as valid from pg_class c join pg_index i on i.indexrelid = c.oid where c.relname = ${name}`),
  );
  if (existing?.valid) return true;
  const concurrently = build.concurrently ? 'concurrently ' : '';
  const memoryMb = indexBuildMemoryMb(sample.vectors, sample.dims, build.maxMemoryMb);
  const started = performance.now();
  onBuild({ blocking: !build.concurrently, since: Date.now() });
  log.info({ model, dims: sample.dims, vectors: sample.vectors, concurrently: build.concurrently }, 'building the vector index');
  await build.withSession(async (session) => {
    // An interrupted concurrent build leaves an invalid index behind: drop it and start again.
    if (existing) await session.exec(`drop index ${concurrently}if exists ${name}`);
    await session.exec(`set maintenance_work_mem = '${memoryMb}MB'`);
    try {
      await session.exec(`
        create index ${concurrently}if not exists ${name} on tool_embeddings
        using hnsw ((embedding::${vectorTypeName(sample.dims)}) vector_cosine_ops)
        where model = ${literal(model)}`);
    } finally {
      await session.exec('reset maintenance_work_mem');
    }
  }).finally(() => onBuild(undefined));
  log.info({ model, dims: sample.dims, vectors: sample.vectors, memoryMb, ms: Math.round(performance.now() - started) }, 'built the vector index');
  return true;
}
