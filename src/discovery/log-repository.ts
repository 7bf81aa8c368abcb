import { and, desc, eq, lt, or, sql } from 'drizzle-orm';

import type { Executor } from '../db/client.js';
import { discoveryLog } from '../db/schema.js';

export type DiscoveryLogEntry = typeof discoveryLog.$inferInsert;
export type DiscoveryLogRow = typeof discoveryLog.$inferSelect;

/** Inserts discovery log entries in one statement. */
export async function appendDiscoveries(executor: Executor, entries: DiscoveryLogEntry[]): Promise<void> {
  if (entries.length > 0) await executor.insert(discoveryLog).values(entries);
}

/**
 * Discoveries a `poorOnly` listing examines per page at most, newest first: the tenant index orders
 * a tenant's discoveries by time alone, so a tenant with few poor ones had its whole log read in
 * one statement (about 190 ms for 500,000 discoveries on PGlite).
 */
export const POOR_SCAN_ROWS = 10_000;

/**
 * A tenant's discoveries, newest first. `poorOnly` keeps those that matched poorly: empty
 * shortlists and low-confidence answers, the queries whose tools need better cards. `examinedTo`
 * is set when a `poorOnly` listing stopped at POOR_SCAN_ROWS discoveries: the time of the oldest
 * it examined, before which poor ones may remain.
 */
export async function listDiscoveries(
  executor: Executor,
  tenantId: string,
  options: { limit: number; before?: Date; poorOnly: boolean },
): Promise<{ rows: DiscoveryLogRow[]; examinedTo: Date | undefined }> {
  const newest = and(eq(discoveryLog.tenantId, tenantId), options.before === undefined ? undefined : lt(discoveryLog.at, options.before));
  const order = [desc(discoveryLog.at), desc(discoveryLog.id)];
  if (!options.poorOnly) {
    return { rows: await executor.select().from(discoveryLog).where(newest).orderBy(...order).limit(options.limit), examinedTo: undefined };
  }
  // The filter is applied outside the limited window, where the planner cannot push it down.
  const window = executor.select().from(discoveryLog).where(newest).orderBy(...order).limit(POOR_SCAN_ROWS).as('window');
  const times = executor.select({ at: discoveryLog.at }).from(discoveryLog).where(newest).orderBy(...order).limit(POOR_SCAN_ROWS).as('times');
  const [rows, [edge]] = await Promise.all([
    executor
      .select()
      .from(window)
      .where(or(eq(window.lowConfidence, true), sql`jsonb_array_length(${window.shortlist}) = 0`))
      .orderBy(desc(window.at), desc(window.id))
      .limit(options.limit),
    executor.select({ count: sql<number>`count(*)::int`, oldest: sql<string | Date | null>`min(${times.at})` }).from(times),
  ]);
  const full = Number(edge?.count ?? 0) >= POOR_SCAN_ROWS;
  return { rows, examinedTo: full && edge?.oldest != null ? new Date(edge.oldest) : undefined };
}
