import { createHash } from 'node:crypto';

import { sql } from 'drizzle-orm';
import { toSql } from 'pgvector';

import { type Db, rowsOf } from '../db/client.js';
import { tools } from '../db/schema.js';
import type { IndexStatus } from '../tools/views.js';
import { CARD_TEXTS_VERSION, type EmbeddableCard } from './embedding-texts.js';
import { literal } from './vector-index.js';

export interface StaleTool extends EmbeddableCard {
  id: number;
  tenantId: string;
  /** Identity of the embedded texts: content hash plus learned aliases. */
  stamp: string;
}

// What the vectors were computed from: the document, the learned aliases and the card texts' version.
const STAMP = sql.raw(`md5(t.content_hash || t.search_learned || ${literal(CARD_TEXTS_VERSION)})`);

type StaleRow = { id: number | string; tenant_id: string; name: string; summary: string; description: string; aliases: string[]; examples: string[]; search_params: string; search_learned: string; stamp: string };

// What the indexer reads of a tool `t`.
const STALE_COLUMNS = sql`t.id, t.tenant_id, t.name, t.summary, t.description, t.aliases, t.examples, t.search_params, t.search_learned, ${STAMP} as stamp`;
// The tool's card vector `e` for `model`, if any.
const cardVector = (model: string) => sql`left join tool_embeddings e on e.tool_id = t.id and e.tenant_id = t.tenant_id and e.model = ${model} and e.ord = 0`;
/**
 * Which refusals hold a tool back from the passes (see recordFailures): those of its current
 * content recorded less than `ms` ago and not before `since` (a database timestamp: the indexer's
 * start, so a restart, after an embedder's fix say, tries every refused tool once).
 */
export interface RefusalHold {
  ms: number;
  since: string;
}

// The refusals `hold` counts, of model `model`, as `f`.
const heldRefusal = (model: string, hold: RefusalHold) =>
  sql`f.model = ${model} and f.refused and f.failed_at > now() - ${hold.ms} * interval '1 millisecond' and f.failed_at >= ${hold.since}::timestamptz`;

// An active tool whose vectors for `model` are missing or older than its content, and whose current
// content no refusal under `hold` holds back.
const stale = (model: string, hold: RefusalHold | undefined) => sql`t.status = 'active' and (e.tool_id is null or e.content_hash <> ${STAMP})${
  hold ? sql` and not exists (select 1 from embedding_failures f where f.tool_id = t.id and f.tenant_id = t.tenant_id and f.stamp = ${STAMP} and ${heldRefusal(model, hold)})` : sql``
}`;

const toStaleTool = (r: StaleRow): StaleTool => ({
  id: Number(r.id),
  tenantId: r.tenant_id,
  name: r.name,
  summary: r.summary,
  description: r.description,
  aliases: r.aliases,
  examples: r.examples,
  parameters: r.search_params,
  learned: r.search_learned === '' ? [] : r.search_learned.split('\n'),
  stamp: r.stamp,
});

/**
 * Active tools after id `after` whose vectors for `model` are missing or older than their content,
 * in id order, leaving out those a refusal under `hold` holds back. A sweep passes on the last id
 * it got, so each batch starts where the previous one stopped: from the start every time, each
 * batch walked past every tool already embedded, and at 100,000 tools finding a batch of 64 took 0.4 s.
 */
export async function staleTools(db: Db, model: string, limit: number, after = 0, hold?: RefusalHold): Promise<StaleTool[]> {
  const rows = await rowsOf<StaleRow>(
    db.execute(sql`select ${STALE_COLUMNS} from ${tools} t ${cardVector(model)} where ${stale(model, hold)} and t.id > ${after} order by t.id limit ${limit}`),
  );
  return rows.map(toStaleTool);
}

/**
 * Up to `limit` stale tools (as staleTools) taken in turns across tenants: every tenant's oldest,
 * then every tenant's second oldest, and so on. In id order alone, another tenant's new tool
 * waited behind a whole import (10,000 tools: half an hour of the local encoder). It reads every
 * stale tool (122,300 tools, 72,000 of them stale: 0.4 s on native PostgreSQL), so the indexer
 * takes a batch this way only now and then (EmbeddingIndexer).
 */
export async function staleToolsInTurns(db: Db, model: string, limit: number, hold?: RefusalHold): Promise<StaleTool[]> {
  const rows = await rowsOf<StaleRow>(
    db.execute(sql`
    with picked as (
      select id, tenant_id, turn from (
        select t.id, t.tenant_id, row_number() over (partition by t.tenant_id order by t.id) as turn
        from ${tools} t ${cardVector(model)}
        where ${stale(model, hold)}
      ) stale
      where turn <= ${limit} order by turn, id limit ${limit}
    )
    select ${STALE_COLUMNS} from picked p join ${tools} t on t.id = p.id and t.tenant_id = p.tenant_id order by p.turn, p.id`),
  );
  return rows.map(toStaleTool);
}

/**
 * Every tenant's catalog revision, summed, with how many tenants have one. The triggers of
 * migrations 0012 and 0014 bump a tenant's revision on every write to its tools or vectors, so
 * while this value stays the same no tool can have become stale: one read of a row per tenant
 * instead of the sweep's anti-join over every tool (122,300 tools: 0.6-1.1 s on native PostgreSQL).
 */
export async function catalogSignature(db: Db): Promise<string> {
  const [row] = await rowsOf<{ signature: string }>(db.execute(sql`select coalesce(sum(revision), 0)::text || '/' || count(*)::text as signature from catalog_revisions`));
  return row!.signature;
}

/** Identity of one embedded text, stored with its vector so unchanged texts are never embedded again. */
export function textHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

/** One text a tenant needs a vector for, by its hash. */
export interface WantedText {
  tenantId: string;
  textHash: string;
}

/** Key of a tenant's text in the map `storedVectors` returns. */
export const textKey = (tenantId: string, hash: string): string => `${tenantId}\n${hash}`;

/**
 * Vectors of `model` already stored for some of these texts in the same tenant, by
 * `textKey(tenant, hash)`: any tool's vector of the same text serves (a new version, another tool
 * with the same alias, a tool published again under a new name), so an unchanged text is never
 * encoded twice. Never across tenants: one tenant's texts stay invisible to another, even as a
 * shorter indexing time. Vectors marked stale (`markStale`) have no text hash and never match.
 * One lookup on tool_embeddings_text_idx per wanted text.
 */
export async function storedVectors(db: Db, model: string, wanted: WantedText[]): Promise<Map<string, number[]>> {
  const found = new Map<string, number[]>();
  const unique = [...new Map(wanted.map((w) => [textKey(w.tenantId, w.textHash), w])).values()];
  if (unique.length === 0) return found;
  const rows = await rowsOf<{ tenant_id: string; text_hash: string; embedding: string }>(
    db.execute(sql`
      select w.tenant_id, w.text_hash, v.embedding
      from unnest(${sql.param(unique.map((w) => w.tenantId))}::text[], ${sql.param(unique.map((w) => w.textHash))}::text[]) as w(tenant_id, text_hash)
      cross join lateral (
        select e.embedding::text as embedding from tool_embeddings e
        where e.tenant_id = w.tenant_id and e.model = ${model} and e.text_hash = w.text_hash and e.text_hash is not null
        limit 1) v`),
  );
  for (const row of rows) found.set(textKey(row.tenant_id, row.text_hash), JSON.parse(row.embedding) as number[]);
  return found;
}

/** One vector to store, with the hash of the text it was computed from. */
interface TextVector {
  textHash: string;
  vector: number[];
}

/**
 * Replaces a tool's vectors for `model` in one transaction. Stamped with what the texts came
 * from, so a tool edited meanwhile stays stale and is embedded again.
 */
export async function saveEmbeddings(db: Db, toolId: number, model: string, stamp: string, vectors: TextVector[]): Promise<void> {
  await db.transaction(async (tx) => {
    // The tool may have been deleted or changed since it was read: only stamp the content we embedded.
    const [current] = await rowsOf<{ stamp: string; tenant_id: string }>(tx.execute(sql`select ${STAMP} as stamp, t.tenant_id from ${tools} t where t.id = ${toolId}`));
    if (!current || current.stamp !== stamp) return;
    await tx.execute(sql`delete from tool_embeddings where tool_id = ${toolId} and model = ${model}`);
    await tx.execute(sql`delete from embedding_failures where tool_id = ${toolId} and model = ${model}`);
    for (const [ord, { textHash: hash, vector }] of vectors.entries()) {
      await tx.execute(sql`
        insert into tool_embeddings (tenant_id, tool_id, model, ord, dims, content_hash, text_hash, embedding)
        values (${current.tenant_id}, ${toolId}, ${model}, ${ord}, ${vector.length}, ${stamp}, ${hash}, ${toSql(vector) as string}::vector)`);
    }
  });
}

/**
 * Marks every vector of `model` stale so the indexer recomputes them tool by tool (forgetting
 * their text hashes, so none is reused); until it does, the old vectors keep serving (nothing is
 * lost if re-embedding fails half-way).
 */
export async function markStale(db: Db, model: string): Promise<void> {
  await db.execute(sql`update tool_embeddings set content_hash = '', text_hash = null where model = ${model}`);
}

/**
 * Records that embedding these tools' current content with `model` failed (the last attempt wins);
 * `refused` when the embedder refused the texts themselves, which the stale-tool reads then leave
 * out for a while (the same texts would be refused again).
 */
export async function recordFailures(db: Db, failed: Pick<StaleTool, 'id' | 'stamp'>[], model: string, error: string, refused = false): Promise<void> {
  if (failed.length === 0) return;
  const message = error.slice(0, 500);
  await db.transaction(async (tx) => {
    for (const tool of failed) {
      await tx.execute(sql`
        insert into embedding_failures (tenant_id, tool_id, model, stamp, error, refused)
        select t.tenant_id, t.id, ${model}, ${tool.stamp}, ${message}, ${refused} from ${tools} t where t.id = ${tool.id}
        on conflict (tool_id, model, tenant_id) do update set stamp = excluded.stamp, error = excluded.error, refused = excluded.refused, failed_at = now()`);
    }
  });
}

/** Milliseconds until the first refusal `hold` counts stops holding its tool back; undefined when none does. */
export async function refusalHoldEndsInMs(db: Db, model: string, hold: RefusalHold): Promise<number | undefined> {
  const [row] = await rowsOf<{ ms: number | string | null }>(
    db.execute(sql`select extract(epoch from min(f.failed_at) + ${hold.ms} * interval '1 millisecond' - now()) * 1000 as ms from embedding_failures f where ${heldRefusal(model, hold)}`),
  );
  return row?.ms === null || row?.ms === undefined ? undefined : Math.max(0, Number(row.ms));
}

/** The database's clock, as a timestamp it reads back. */
export async function databaseNow(db: Db): Promise<string> {
  const [row] = await rowsOf<{ now: string }>(db.execute(sql`select now()::text as now`));
  return row!.now;
}

/** The index status of one tool for `model` (one indexed lookup per table). */
export async function indexStatus(db: Db, toolId: number, model: string): Promise<IndexStatus> {
  const [row] = await rowsOf<{ current: boolean | null; failed: boolean | null }>(
    db.execute(sql`
    select (select e.content_hash = ${STAMP} from tool_embeddings e where e.tool_id = t.id and e.model = ${model} and e.ord = 0) as current,
           (select f.stamp = ${STAMP} from embedding_failures f where f.tool_id = t.id and f.model = ${model}) as failed
    from ${tools} t where t.id = ${toolId}`),
  );
  if (row?.current) return 'indexed';
  return row?.failed ? 'failed' : 'pending';
}

/** How many active tools have current vectors for a model, wait for them, or failed their last attempt. */
export interface IndexCounts {
  active: number;
  indexed: number;
  pending: number;
  failed: number;
}

/**
 * Index counts over the active tools of every tenant, or of one tenant (and one catalog sync
 * source): the index backlog of /metrics and /readyz, and a publisher's sync progress. One pass
 * over the tools with an indexed lookup per tool (~10 ms per 10,000 tools).
 */
export async function indexCounts(db: Db, model: string, scope: { tenantId?: string; source?: string } = {}): Promise<IndexCounts> {
  const [row] = await rowsOf<{ active: number | string; indexed: number | string; failed: number | string }>(
    db.execute(sql`
    select count(*) as active,
           count(*) filter (where e.content_hash = ${STAMP}) as indexed,
           count(*) filter (where e.content_hash is distinct from ${STAMP}
                              and exists (select 1 from embedding_failures f where f.tool_id = t.id and f.model = ${model} and f.stamp = ${STAMP})) as failed
    from ${tools} t
    left join tool_embeddings e on e.tool_id = t.id and e.model = ${model} and e.ord = 0
    where t.status = 'active'
      ${scope.tenantId === undefined ? sql`` : sql`and t.tenant_id = ${scope.tenantId}`}
      ${scope.source === undefined ? sql`` : sql`and t.source = ${scope.source}`}`),
  );
  const active = Number(row?.active ?? 0);
  const indexed = Number(row?.indexed ?? 0);
  const failed = Number(row?.failed ?? 0);
  return { active, indexed, failed, pending: Math.max(0, active - indexed - failed) };
}
