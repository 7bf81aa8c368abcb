import { and, desc, eq, lt } from 'drizzle-orm';

import type { Executor } from '../db/client.js';
import { auditLog } from '../db/schema.js';

export type AuditEntry = typeof auditLog.$inferInsert;
export type AuditRow = typeof auditLog.$inferSelect;

/** Appends one audit record (in the caller's transaction when given one). */
export async function appendAudit(executor: Executor, entry: AuditEntry): Promise<void> {
  await executor.insert(auditLog).values(entry);
}

/** A tenant's audit records, newest first, keyset-paginated by id, optionally by action or tool. */
export async function listAudit(
  executor: Executor,
  tenantId: string,
  options: { limit: number; before?: number; action?: string; tool?: string },
): Promise<AuditRow[]> {
  return executor
    .select()
    .from(auditLog)
    .where(
      and(
        eq(auditLog.tenantId, tenantId),
        options.before === undefined ? undefined : lt(auditLog.id, options.before),
        options.action === undefined ? undefined : eq(auditLog.action, options.action),
        options.tool === undefined ? undefined : eq(auditLog.toolName, options.tool),
      ),
    )
    .orderBy(desc(auditLog.id))
    .limit(options.limit);
}
