import { and, asc, desc, eq, sql } from 'drizzle-orm';

import { type Executor, rowsOf } from '../db/client.js';
import { learnedAliases } from '../db/schema.js';
import { refreshTerms } from '../tools/repository.js';

export type LearnedAliasRow = typeof learnedAliases.$inferSelect;

export interface LearningLimits {
  minMisses: number;
  maxPerTool: number;
  ttlDays: number;
}

/** Counts one allowed call of a tool. */
export async function countCall(executor: Executor, toolId: number, tenantId: string): Promise<void> {
  await executor.execute(sql`
    insert into tool_usage (tool_id, tenant_id, calls) values (${toolId}, ${tenantId}, 1)
    on conflict (tool_id, tenant_id) do update set calls = tool_usage.calls + 1, last_called_at = now()`);
}

/** Call counts of some tools (absent: never called). */
export async function callCounts(executor: Executor, toolIds: number[]): Promise<Map<number, number>> {
  if (toolIds.length === 0) return new Map();
  const rows = await rowsOf<{ tool_id: string | number; calls: string | number }>(
    executor.execute(sql`select tool_id, calls from tool_usage where tool_id = any(${sql.param(toolIds)}::bigint[])`),
  );
  return new Map(rows.map((r) => [Number(r.tool_id), Number(r.calls)]));
}

/** Records that `query` led an agent to this tool although discovery had not offered it. */
export async function recordMiss(executor: Executor, toolId: number, tenantId: string, query: string): Promise<void> {
  await executor.execute(sql`
    insert into learned_aliases (tool_id, tenant_id, query) values (${toolId}, ${tenantId}, ${query})
    on conflict (tool_id, query, tenant_id) do update set misses = learned_aliases.misses + 1, last_seen = now()`);
}

/**
 * Recomputes the tool's indexed learned text from its live aliases: seen often enough, not aged
 * out, the most recent `maxPerTool`. Older ones beyond the bound are deleted.
 */
export async function refreshLearnedText(executor: Executor, toolId: number, limits: LearningLimits): Promise<void> {
  await executor.execute(sql`
    delete from learned_aliases where tool_id = ${toolId} and id not in (
      select id from learned_aliases where tool_id = ${toolId} order by last_seen desc, id desc limit ${limits.maxPerTool})`);
  await executor.execute(sql`
    update tools set search_learned = coalesce((
      select string_agg(query, chr(10) order by id) from learned_aliases
      where tool_id = ${toolId} and misses >= ${limits.minMisses}
        and last_seen > now() - make_interval(days => ${limits.ttlDays})), '')
    where id = ${toolId}`);
  // The learned text is part of the tsvector: the lexical leg reads postings derived from it.
  await refreshTerms(executor, toolId);
}

/** A tool's learned aliases, newest first. */
export async function listLearned(executor: Executor, toolId: number): Promise<LearnedAliasRow[]> {
  return executor.select().from(learnedAliases).where(eq(learnedAliases.toolId, toolId)).orderBy(desc(learnedAliases.lastSeen), asc(learnedAliases.id));
}

/** Deletes one learned alias of a tool; false when there was none. */
export async function deleteLearned(executor: Executor, toolId: number, aliasId: number): Promise<boolean> {
  const deleted = await executor
    .delete(learnedAliases)
    .where(and(eq(learnedAliases.toolId, toolId), eq(learnedAliases.id, aliasId)))
    .returning({ id: learnedAliases.id });
  return deleted.length > 0;
}

/** Deletes aliases older than the TTL; returns the tools whose learned text must be refreshed. */
export async function expireLearned(executor: Executor, ttlDays: number): Promise<number[]> {
  const rows = await rowsOf<{ tool_id: string | number }>(
    executor.execute(sql`delete from learned_aliases where last_seen < now() - make_interval(days => ${ttlDays}) returning tool_id`),
  );
  return [...new Set(rows.map((r) => Number(r.tool_id)))];
}


/** Tools agents called although discovery had not offered them, with the queries that led there. */
export async function missedTools(
  executor: Executor,
  tenantId: string,
  sinceDays: number,
  limit: number,
): Promise<{ name: string; misses: number; queries: string[] }[]> {
  const rows = await rowsOf<{ name: string; misses: string | number; queries: string[] }>(
    executor.execute(sql`
      select t.name, sum(la.misses) as misses,
             (array_agg(la.query order by la.misses desc, la.last_seen desc))[1:5] as queries
      from learned_aliases la join tools t on t.id = la.tool_id
      where la.tenant_id = ${tenantId} and la.last_seen > now() - make_interval(days => ${sinceDays})
      group by t.name
      order by sum(la.misses) desc, t.name
      limit ${limit}`),
  );
  return rows.map((r) => ({ name: r.name, misses: Number(r.misses), queries: r.queries }));
}

/** Discoveries no authorize call ever cited (after a grace period): agents found nothing to call. */
export async function unansweredDiscoveries(
  executor: Executor,
  tenantId: string,
  sinceDays: number,
  graceMinutes: number,
  limit: number,
): Promise<{ id: string; at: Date; query: string; shortlist: { name: string; score: number }[]; lowConfidence: boolean }[]> {
  const rows = await rowsOf<{ id: string; at: string | Date; query: string; shortlist: { name: string; score: number }[]; low_confidence: boolean }>(
    executor.execute(sql`
      select d.id, d.at, d.query, d.shortlist, d.low_confidence
      from discovery_log d
      where d.tenant_id = ${tenantId}
        and d.at > now() - make_interval(days => ${sinceDays})
        and d.at < now() - make_interval(mins => ${graceMinutes})
        and not exists (select 1 from audit_log a where a.discovery_id = d.id and a.tenant_id = ${tenantId} and a.action = 'authorize')
      order by d.at desc
      limit ${limit}`),
  );
  return rows.map((r) => ({ id: r.id, at: new Date(r.at), query: r.query, shortlist: r.shortlist, lowConfidence: r.low_confidence }));
}
