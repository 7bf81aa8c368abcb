import { and, eq, param, sql } from 'drizzle-orm';

import type { Executor } from '../db/client.js';
import { type ToolRow, tools } from '../db/schema.js';

/** What a sync compares of a stored tool: never its document or search texts. */
export type HeldTool = Pick<ToolRow, 'id' | 'name' | 'status' | 'version' | 'contentHash' | 'source'>;

/** Every tool of the tenant, whatever its owner and status, by name: one query per sync. */
export async function heldTools(executor: Executor, tenantId: string): Promise<Map<string, HeldTool>> {
  const rows = await executor
    .select({ id: tools.id, name: tools.name, status: tools.status, version: tools.version, contentHash: tools.contentHash, source: tools.source })
    .from(tools)
    .where(eq(tools.tenantId, tenantId));
  return new Map(rows.map((row) => [row.name, row]));
}

/**
 * Stamps tools a sync adopted unchanged with its source, in one statement (one array parameter, however many). Only tools without an
 * owner are taken: one another source claimed meanwhile keeps its owner.
 */
export async function stampSource(executor: Executor, tenantId: string, names: readonly string[], source: string): Promise<void> {
  await executor
    .update(tools)
    .set({ source })
    .where(and(eq(tools.tenantId, tenantId), sql`${tools.name} = any(${param([...names])}::text[])`, sql`${tools.source} is null`));
}
