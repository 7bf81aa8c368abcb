import { and, arrayOverlaps, asc, eq, gt, sql } from 'drizzle-orm';

import type { Executor } from '../db/client.js';
import { type ToolRow, tools, toolVersions } from '../db/schema.js';
import { type Visibility, visibleTo } from './access.js';

export type ToolInsert = typeof tools.$inferInsert;
export type ToolVersionRow = typeof toolVersions.$inferSelect;

/** The tool named `name` in the tenant, whatever its status (FOR UPDATE inside a write). */
export async function findTool(executor: Executor, tenantId: string, name: string, forUpdate = false): Promise<ToolRow | undefined> {
  const query = executor.select().from(tools).where(and(eq(tools.tenantId, tenantId), eq(tools.name, name)));
  const rows = forUpdate ? await query.for('update') : await query;
  return rows[0];
}

/**
 * The canonical form names are unique in per tenant (migrations/0013_canonical_tool_names.sql
 * computes the same into tools.canonical_name): lower case, runs of '-', '.' and '_' as one '_',
 * trailing separators dropped. `pay_vendor`, `Pay_Vendor`, `pay-vendor` and `pay_vendor.` are one name.
 */
const canonicalName = (name: string) => sql`regexp_replace(rtrim(lower(${name}), '._-'), '[._-]+', '_', 'g')`;

/**
 * The tenant's tool whose name is `name` in canonical form: the one the unique index holds (of
 * look-alikes registered before the rule, the oldest).
 */
export async function findNameClash(executor: Executor, tenantId: string, name: string): Promise<string | undefined> {
  const rows = await executor
    .select({ name: tools.name })
    .from(tools)
    .where(and(eq(tools.tenantId, tenantId), sql`canonical_name = ${canonicalName(name)} and not canonical_name_legacy`));
  return rows[0]?.name;
}

export interface ListOptions {
  after?: string;
  limit: number;
  category?: string;
  tags?: string[];
}

/** Visible tools ordered by name, keyset-paginated. */
export async function listTools(executor: Executor, visibility: Visibility, options: ListOptions): Promise<ToolRow[]> {
  return executor
    .select()
    .from(tools)
    .where(
      and(
        visibleTo(visibility),
        options.after === undefined ? undefined : gt(tools.name, options.after),
        options.category === undefined ? undefined : eq(tools.category, options.category),
        options.tags === undefined || options.tags.length === 0 ? undefined : arrayOverlaps(tools.tags, options.tags),
      ),
    )
    .orderBy(asc(tools.name))
    .limit(options.limit);
}

/** Inserts a new tool; a unique violation (name taken) surfaces as the driver's 23505 error. */
export async function insertTool(executor: Executor, values: ToolInsert): Promise<ToolRow> {
  const [row] = await executor.insert(tools).values(values).returning();
  return row!;
}

/** Overwrites a tool's current row. */
export async function updateTool(executor: Executor, id: number, values: Partial<ToolInsert>): Promise<ToolRow> {
  const [row] = await executor
    .update(tools)
    .set({ ...values, updatedAt: sql`now()` })
    .where(eq(tools.id, id))
    .returning();
  return row!;
}

/** Records an immutable history entry for the row's current content. */
export async function insertVersion(executor: Executor, row: ToolRow, actor: string | null): Promise<void> {
  await executor.insert(toolVersions).values({
    toolId: row.id,
    revision: row.revision,
    tenantId: row.tenantId,
    name: row.name,
    version: row.version,
    document: row.document,
    contentHash: row.contentHash,
    createdBy: actor,
  });
}

/** A tool's history, oldest first. */
export async function listVersions(executor: Executor, toolId: number): Promise<ToolVersionRow[]> {
  return executor.select().from(toolVersions).where(eq(toolVersions.toolId, toolId)).orderBy(asc(toolVersions.revision));
}
