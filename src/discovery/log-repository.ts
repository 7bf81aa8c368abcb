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
 * A tenant's discoveries, newest first. `poorOnly` keeps those that matched poorly: empty
 * shortlists and low-confidence answers, the queries whose tools need better cards.
 */
export async function listDiscoveries(
  executor: Executor,
  tenantId: string,
  options: { limit: number; before?: Date; poorOnly: boolean },
): Promise<DiscoveryLogRow[]> {
  return executor
    .select()
    .from(discoveryLog)
    .where(
      and(
        eq(discoveryLog.tenantId, tenantId),
        options.before === undefined ? undefined : lt(discoveryLog.at, options.before),
        options.poorOnly ? or(eq(discoveryLog.lowConfidence, true), sql`jsonb_array_length(${discoveryLog.shortlist}) = 0`) : undefined,
      ),
    )
    .orderBy(desc(discoveryLog.at), desc(discoveryLog.id))
    .limit(options.limit);
}
