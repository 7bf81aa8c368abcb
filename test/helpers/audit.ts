import { asc, eq } from 'drizzle-orm';

import type { Database } from '../../src/db/client.js';
import { auditLog } from '../../src/db/schema.js';

/** A tenant's audit records, oldest first, as (action, tool, version, actor). */
export async function auditTrail(database: Database, tenant: string) {
  const rows = await database.db.select().from(auditLog).where(eq(auditLog.tenantId, tenant)).orderBy(asc(auditLog.id));
  return rows.map((r) => ({ action: r.action, tool: r.toolName, version: r.toolVersion, actor: r.actor }));
}
