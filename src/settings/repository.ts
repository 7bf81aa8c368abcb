import { eq } from 'drizzle-orm';

import type { Executor } from '../db/client.js';
import { tenantSettings, type TenantSettingsRow } from '../db/schema.js';

/** A tenant's settings row, or undefined when it never set any (every default applies). */
export async function findSettings(executor: Executor, tenantId: string): Promise<TenantSettingsRow | undefined> {
  const [row] = await executor.select().from(tenantSettings).where(eq(tenantSettings.tenantId, tenantId)).limit(1);
  return row;
}

/** Writes a tenant's settings (insert or replace), returning the stored row. */
export async function upsertSettings(executor: Executor, tenantId: string, values: { warningsAsErrors: string[]; updatedBy: string | null }): Promise<TenantSettingsRow> {
  const now = new Date();
  const [row] = await executor
    .insert(tenantSettings)
    .values({ tenantId, ...values, updatedAt: now })
    .onConflictDoUpdate({ target: tenantSettings.tenantId, set: { ...values, updatedAt: now } })
    .returning();
  return row!;
}
