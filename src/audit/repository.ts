import { and, desc, eq, lt, sql } from 'drizzle-orm';

import type { Executor } from '../db/client.js';
import { auditLog } from '../db/schema.js';

export type AuditEntry = typeof auditLog.$inferInsert;
export type AuditRow = typeof auditLog.$inferSelect;

/** Appends one audit record (in the caller's transaction when given one). */
export async function appendAudit(executor: Executor, entry: AuditEntry): Promise<void> {
  await executor.insert(auditLog).values(entry);
}

/**
 * Records a filtered listing examines per page at most, newest first. The tenant index orders a
 * tenant's records by id alone, so a filter on a rare action or tool would otherwise read the
 * whole log in one statement (a tenant's millions of authorize decisions), holding a connection,
 * and on the embedded database the one backend, for every tenant meanwhile.
 */
export const AUDIT_SCAN_ROWS = 10_000;

/**
 * A tenant's audit records, newest first, keyset-paginated by id, optionally by action or tool.
 * `examinedTo` is set when a filtered listing stopped at AUDIT_SCAN_ROWS records: the lowest id it
 * examined, below which matching records may remain.
 */
export async function listAudit(
  executor: Executor,
  tenantId: string,
  options: { limit: number; before?: number; action?: string; tool?: string },
): Promise<{ rows: AuditRow[]; examinedTo: number | undefined }> {
  const newest = and(eq(auditLog.tenantId, tenantId), options.before === undefined ? undefined : lt(auditLog.id, options.before));
  if (options.action === undefined && options.tool === undefined) {
    return { rows: await executor.select().from(auditLog).where(newest).orderBy(desc(auditLog.id)).limit(options.limit), examinedTo: undefined };
  }
  // The filter is applied outside the limited window, where the planner cannot push it down: a
  // filter it expects to be rare made it scan the whole table instead (every tenant's records).
  const window = executor.select().from(auditLog).where(newest).orderBy(desc(auditLog.id)).limit(AUDIT_SCAN_ROWS).as('window');
  const ids = executor.select({ id: auditLog.id }).from(auditLog).where(newest).orderBy(desc(auditLog.id)).limit(AUDIT_SCAN_ROWS).as('ids');
  const [rows, [edge]] = await Promise.all([
    executor
      .select()
      .from(window)
      .where(and(options.action === undefined ? undefined : eq(window.action, options.action), options.tool === undefined ? undefined : eq(window.toolName, options.tool)))
      .orderBy(desc(window.id))
      .limit(options.limit),
    executor.select({ count: sql<number>`count(*)::int`, lowest: sql<number | null>`min(${ids.id})` }).from(ids),
  ]);
  const full = Number(edge?.count ?? 0) >= AUDIT_SCAN_ROWS;
  return { rows, examinedTo: full && edge?.lowest != null ? Number(edge.lowest) : undefined };
}
