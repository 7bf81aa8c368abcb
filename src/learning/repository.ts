import { and, eq, sql } from 'drizzle-orm';

import { type Executor, rowsOf } from '../db/client.js';
import { discoveryLog, learnedAliases } from '../db/schema.js';
import { refreshTerms } from '../tools/lexical/postings.js';
import type { CitedDiscovery } from './rules.js';

export interface LearningLimits {
  /** Distinct subjects who must teach an alias before it ranks. */
  minSubjects: number;
  maxPerTool: number;
  ttlDays: number;
  /** Votes one subject may cast per hour in a tenant; beyond, its misses teach nothing. */
  votesPerHour: number;
}

/** A learned alias as publishers see it: who taught it, and whether it ranks. */
export interface LearnedAliasRow {
  id: number;
  query: string;
  /** Discoveries that taught it (each counted once). */
  misses: number;
  /** Distinct subjects among its live votes: what counts. */
  support: number;
  taughtBy: { subject: string; at: Date }[];
  review: 'none' | 'approved' | 'rejected';
  reviewedBy: string | null;
  reviewedAt: Date | null;
  /** The tool is high-sensitivity or side-effecting: its aliases rank only once approved. */
  needsApproval: boolean;
  /** Part of the tool's index now. */
  ranks: boolean;
  firstSeen: Date;
  lastSeen: Date;
}

/**
 * One of the tenant's discoveries as the log has it, only when `subject` made it: a discovery is
 * evidence about its own caller's search, never another caller's (nor another tenant's).
 */
export async function findOwnDiscovery(executor: Executor, tenantId: string, subject: string, id: string): Promise<CitedDiscovery | undefined> {
  const rows = await rowsOf<{ query: string; shortlist: { name: string }[]; filters: Record<string, unknown> | null; search_mode: string }>(
    executor.execute(sql`select query, shortlist, filters, search_mode from ${discoveryLog} where id = ${id} and tenant_id = ${tenantId} and subject = ${subject}`),
  );
  const row = rows[0];
  return row ? { query: row.query, names: row.shortlist.map((t) => t.name), filters: row.filters, searchMode: row.search_mode } : undefined;
}

const live = (ttlDays: number) => sql`v.at > now() - make_interval(days => ${ttlDays})`;

/** Distinct subjects among the live votes of the alias row `la`. */
const supportOf = (ttlDays: number) =>
  sql`(select count(distinct v.subject) from learned_alias_votes v where v.alias_id = la.id and ${live(ttlDays)})`;

/** Whether the tool row `t` needs a publisher's approval of its learned aliases. */
const NEEDS_APPROVAL = sql`(t.sensitivity = 'high' or t.side_effects)`;

/**
 * THE rule for "a learned alias ranks" (docs/api.md, "Learning from calls"), over alias `la` of tool
 * `t`: not rejected; taught by at least `minSubjects` distinct subjects within the TTL; and, for a
 * high-sensitivity or side-effecting tool, approved by a publisher. Applied where learned text is
 * written into the tool's index (lexical postings and vectors), so discovery needs no rule of its own.
 */
const ranks = (limits: LearningLimits) =>
  sql`(la.review <> 'rejected' and (la.review = 'approved' or not ${NEEDS_APPROVAL}) and ${supportOf(limits.ttlDays)} >= ${limits.minSubjects})`;

/** A miss worth a vote: a subject's own discovery that did not offer the tool it then called. */
export interface Miss {
  toolId: number;
  tenantId: string;
  query: string;
  subject: string;
  discoveryId: string;
}

/**
 * Records a miss as one vote for the query as an alias of the tool, within the subject's hourly
 * budget; a discovery votes once, and a rejected alias takes no votes. Keeps the tool's aliases
 * bounded (by support) and re-indexes its learned text when the ranking set changed. Returns
 * whether it did (the tool then needs new vectors).
 */
export async function teach(executor: Executor, miss: Miss, limits: LearningLimits): Promise<boolean> {
  const [spent] = await rowsOf<{ votes: number }>(
    executor.execute(sql`
      select count(*)::int as votes from learned_alias_votes
      where tenant_id = ${miss.tenantId} and subject = ${miss.subject} and at > now() - interval '1 hour'`),
  );
  if ((spent?.votes ?? 0) >= limits.votesPerHour) return false;
  const used = await rowsOf(executor.execute(sql`select 1 from learned_alias_votes where discovery_id = ${miss.discoveryId}`));
  if (used.length > 0) return false;
  const [alias] = await rowsOf<{ id: string | number; review: string }>(
    executor.execute(sql`
      insert into learned_aliases (tool_id, tenant_id, query, misses) values (${miss.toolId}, ${miss.tenantId}, ${miss.query}, 0)
      on conflict (tool_id, query, tenant_id) do update set tool_id = excluded.tool_id
      returning id, review`),
  );
  if (!alias || alias.review === 'rejected') return false;
  const voted = await rowsOf(
    executor.execute(sql`
      insert into learned_alias_votes (discovery_id, alias_id, tenant_id, subject)
      values (${miss.discoveryId}, ${alias.id}, ${miss.tenantId}, ${miss.subject})
      on conflict (discovery_id, tenant_id) do nothing returning alias_id`),
  );
  if (voted.length === 0) return false;
  await executor.execute(sql`update learned_aliases set misses = misses + 1, last_seen = now() where id = ${alias.id}`);
  await evict(executor, miss.toolId, miss.subject, limits);
  return refreshLearnedText(executor, miss.toolId, limits);
}

/**
 * Keeps a tool's unrejected aliases within `maxPerTool` at the expense of the voting subject only:
 * what goes is that subject's own pending aliases (unreviewed, no live vote of anyone else), least
 * supported and oldest first. Before, the least supported of all went, so one subject's 20+ junk
 * misses evicted an alias one other user had taught (issue 32, finding 6); now a flood of queries
 * from one subject only turns over its own, and never an alias another user taught or a
 * publisher approved.
 */
async function evict(executor: Executor, toolId: number, subject: string, limits: LearningLimits): Promise<void> {
  await executor.execute(sql`
    delete from learned_aliases where id in (
      select la.id from learned_aliases la
      where la.tool_id = ${toolId} and la.review = 'none'
        and not exists (select 1 from learned_alias_votes v where v.alias_id = la.id and v.subject <> ${subject} and ${live(limits.ttlDays)})
      order by ${supportOf(limits.ttlDays)}, la.last_seen, la.id
      limit greatest(0, (select count(*) from learned_aliases where tool_id = ${toolId} and review <> 'rejected') - ${limits.maxPerTool}))`);
}

/**
 * Writes the tool's ranking aliases into its indexed learned text; returns whether it changed.
 * Call it in the transaction of anything that can change the rule's outcome (votes, reviews,
 * expiry, a change of the tool's sensitivity or side effects), then refresh the postings.
 */
export async function updateLearnedText(executor: Executor, toolId: number, limits: LearningLimits): Promise<boolean> {
  // The row lock first: a statement reads what was committed when it began, so an UPDATE that
  // computed the text and then waited for another teacher's lock would write text without that
  // teacher's alias. Locked first, the text is read after the wait. NO KEY UPDATE is the lock the
  // UPDATE takes anyway: FOR UPDATE would also conflict with the KEY SHARE locks that inserts
  // referencing the tool take (usage, aliases, postings, vectors), and deadlock with them.
  await executor.execute(sql`select id from tools where id = ${toolId} for no key update`);
  const changed = await rowsOf(
    executor.execute(sql`
      update tools set search_learned = learned.text
      from (
        select coalesce(string_agg(la.query, chr(10) order by la.id), '') as text
        from learned_aliases la join tools t on t.id = la.tool_id
        where la.tool_id = ${toolId} and ${ranks(limits)}
      ) learned
      where tools.id = ${toolId} and tools.search_learned <> learned.text
      returning tools.id`),
  );
  return changed.length > 0;
}

/** updateLearnedText, then the postings when the text changed (the lexical leg reads postings). */
export async function refreshLearnedText(executor: Executor, toolId: number, limits: LearningLimits): Promise<boolean> {
  const changed = await updateLearnedText(executor, toolId, limits);
  if (changed) await refreshTerms(executor, toolId);
  return changed;
}

/** A tool's learned aliases, newest first, with their teachers and whether each ranks. */
export async function listLearned(executor: Executor, toolId: number, limits: LearningLimits): Promise<LearnedAliasRow[]> {
  const rows = await rowsOf<{
    id: string | number;
    query: string;
    misses: number;
    support: string | number;
    taught_by: { subject: string; at: string }[];
    review: LearnedAliasRow['review'];
    reviewed_by: string | null;
    reviewed_at: string | Date | null;
    needs_approval: boolean;
    ranks: boolean;
    first_seen: string | Date;
    last_seen: string | Date;
  }>(
    executor.execute(sql`
      select la.id, la.query, la.misses, la.review, la.reviewed_by, la.reviewed_at, la.first_seen, la.last_seen,
             ${supportOf(limits.ttlDays)} as support, ${NEEDS_APPROVAL} as needs_approval, ${ranks(limits)} as ranks,
             coalesce((
               select jsonb_agg(jsonb_build_object('subject', s.subject, 'at', s.at) order by s.at desc)
               from (select v.subject, max(v.at) as at from learned_alias_votes v
                     where v.alias_id = la.id and ${live(limits.ttlDays)} group by v.subject) s
             ), '[]'::jsonb) as taught_by
      from learned_aliases la join tools t on t.id = la.tool_id
      where la.tool_id = ${toolId}
      order by la.last_seen desc, la.id`),
  );
  return rows.map((r) => ({
    id: Number(r.id),
    query: r.query,
    misses: Number(r.misses),
    support: Number(r.support),
    taughtBy: r.taught_by.map((v) => ({ subject: v.subject, at: new Date(v.at) })),
    review: r.review,
    reviewedBy: r.reviewed_by,
    reviewedAt: r.reviewed_at === null ? null : new Date(r.reviewed_at),
    needsApproval: r.needs_approval,
    ranks: r.ranks,
    firstSeen: new Date(r.first_seen),
    lastSeen: new Date(r.last_seen),
  }));
}

/** Deletes one learned alias of a tool; false when there was none. */
export async function deleteLearned(executor: Executor, toolId: number, aliasId: number): Promise<boolean> {
  const deleted = await executor
    .delete(learnedAliases)
    .where(and(eq(learnedAliases.toolId, toolId), eq(learnedAliases.id, aliasId)))
    .returning({ id: learnedAliases.id });
  return deleted.length > 0;
}

/** Records a publisher's approval or rejection of one alias of a tool; false when there was none. */
export async function reviewLearned(executor: Executor, toolId: number, aliasId: number, review: 'approved' | 'rejected', reviewer: string | null): Promise<boolean> {
  const updated = await executor
    .update(learnedAliases)
    .set({ review, reviewedBy: reviewer, reviewedAt: sql`now()` })
    .where(and(eq(learnedAliases.toolId, toolId), eq(learnedAliases.id, aliasId)))
    .returning({ id: learnedAliases.id });
  return updated.length > 0;
}

// Aliases of `la` left without votes past the TTL; rejected ones are kept, so they are not taught again.
const unsupportedPastTtl = (ttlDays: number) =>
  sql`la.review <> 'rejected' and la.last_seen < now() - make_interval(days => ${ttlDays}) and not exists (select 1 from learned_alias_votes v where v.alias_id = la.id)`;

/**
 * The tools, in id order, with learned-alias votes older than the TTL or aliases left without votes
 * past it: what expireLearnedOf has to do, tool by tool. One read of both tables (neither has an
 * index that leads with the time), so it is read once per expiry, not once per batch.
 */
export async function toolsToExpire(executor: Executor, ttlDays: number): Promise<number[]> {
  const rows = await rowsOf<{ tool_id: string | number }>(
    executor.execute(sql`
      select la.tool_id from learned_alias_votes v join learned_aliases la on la.id = v.alias_id and la.tenant_id = v.tenant_id where not (${live(ttlDays)})
      union
      select la.tool_id from learned_aliases la where ${unsupportedPastTtl(ttlDays)}
      order by 1`),
  );
  return rows.map((r) => Number(r.tool_id));
}

/** Deletes one tool's learned-alias votes older than the TTL, then its aliases left without votes past it. */
export async function expireLearnedOf(executor: Executor, toolId: number, ttlDays: number): Promise<void> {
  await executor.execute(sql`
    delete from learned_alias_votes v using learned_aliases la
    where la.id = v.alias_id and la.tenant_id = v.tenant_id and la.tool_id = ${toolId} and not (${live(ttlDays)})`);
  await executor.execute(sql`delete from learned_aliases la where la.tool_id = ${toolId} and ${unsupportedPastTtl(ttlDays)}`);
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

/**
 * Discoveries the misses report examines at most, newest first: each costs a probe of the audit
 * log, and a tenant whose discoveries are mostly answered would otherwise have its whole window of
 * the log read in one statement.
 */
export const UNANSWERED_SCAN_ROWS = 10_000;

/**
 * Discoveries no authorize call ever cited (after a grace period), among the window's
 * UNANSWERED_SCAN_ROWS newest: agents found nothing to call.
 */
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
      from (
        select id, at, query, shortlist, low_confidence from discovery_log
        where tenant_id = ${tenantId}
          and at > now() - make_interval(days => ${sinceDays})
          and at < now() - make_interval(mins => ${graceMinutes})
        order by at desc
        limit ${UNANSWERED_SCAN_ROWS}
      ) d
      where not exists (select 1 from audit_log a where a.discovery_id = d.id and a.tenant_id = ${tenantId} and a.action in ('authorize', 'call'))
      order by d.at desc
      limit ${limit}`),
  );
  return rows.map((r) => ({ id: r.id, at: new Date(r.at), query: r.query, shortlist: r.shortlist, lowConfidence: r.low_confidence }));
}
