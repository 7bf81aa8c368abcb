import { and, asc, eq, sql } from 'drizzle-orm';

import type { Executor } from '../db/client.js';
import { tools, type UpstreamRow, upstreams, upstreamTools } from '../db/schema.js';

export type NewUpstream = typeof upstreams.$inferInsert;

/** Inserts an upstream; undefined when the tenant already has one by that name. */
export async function insertUpstream(executor: Executor, row: NewUpstream): Promise<UpstreamRow | undefined> {
  const [inserted] = await executor.insert(upstreams).values(row).onConflictDoNothing().returning();
  return inserted;
}

export async function findUpstream(executor: Executor, tenantId: string, name: string): Promise<UpstreamRow | undefined> {
  const [row] = await executor.select().from(upstreams).where(and(eq(upstreams.tenantId, tenantId), eq(upstreams.name, name)));
  return row;
}

/** A tenant's upstreams by name; every tenant's when `tenantId` is undefined (the periodic sync). */
export async function listUpstreams(executor: Executor, tenantId?: string): Promise<UpstreamRow[]> {
  return executor
    .select()
    .from(upstreams)
    .where(tenantId === undefined ? undefined : eq(upstreams.tenantId, tenantId))
    .orderBy(asc(upstreams.tenantId), asc(upstreams.name));
}

export async function deleteUpstream(executor: Executor, tenantId: string, name: string): Promise<void> {
  await executor.delete(upstreams).where(and(eq(upstreams.tenantId, tenantId), eq(upstreams.name, name)));
}

/** Records a sync's outcome on the upstream row. */
export async function recordSync(
  executor: Executor,
  tenantId: string,
  name: string,
  outcome: { status: 'ok' | 'degraded'; toolCount?: number; lastError: string | null; syncedAt?: Date },
): Promise<UpstreamRow | undefined> {
  const [row] = await executor
    .update(upstreams)
    .set({
      status: outcome.status,
      lastError: outcome.lastError,
      ...(outcome.toolCount === undefined ? {} : { toolCount: outcome.toolCount }),
      ...(outcome.syncedAt === undefined ? {} : { syncedAt: outcome.syncedAt }),
    })
    .where(and(eq(upstreams.tenantId, tenantId), eq(upstreams.name, name)))
    .returning();
  return row;
}

/** Tool name -> upstream tool name, for every tool this upstream has served (retired ones too). */
export async function servedTools(executor: Executor, tenantId: string, upstreamName: string): Promise<Map<string, string>> {
  const rows = await executor
    .select({ toolName: upstreamTools.toolName, remoteName: upstreamTools.remoteName })
    .from(upstreamTools)
    .where(and(eq(upstreamTools.tenantId, tenantId), eq(upstreamTools.upstreamName, upstreamName)));
  return new Map(rows.map((r) => [r.toolName, r.remoteName]));
}

/** Which upstream serves a tool name, if any. */
export async function servingUpstream(executor: Executor, tenantId: string, toolName: string): Promise<{ upstreamName: string; remoteName: string } | undefined> {
  const [row] = await executor
    .select({ upstreamName: upstreamTools.upstreamName, remoteName: upstreamTools.remoteName })
    .from(upstreamTools)
    .where(and(eq(upstreamTools.tenantId, tenantId), eq(upstreamTools.toolName, toolName)));
  return row;
}

/** Claims a tool name for an upstream (or renames its remote tool). */
export async function serveTool(executor: Executor, row: typeof upstreamTools.$inferInsert): Promise<void> {
  await executor
    .insert(upstreamTools)
    .values(row)
    .onConflictDoUpdate({ target: [upstreamTools.tenantId, upstreamTools.toolName], set: { upstreamName: row.upstreamName, remoteName: row.remoteName } });
}

/** The route of a call: the upstream serving `toolName` and the tool's name there. */
export async function findRoute(executor: Executor, tenantId: string, toolName: string): Promise<{ upstream: UpstreamRow; remoteName: string } | undefined> {
  const [row] = await executor
    .select({ upstream: upstreams, remoteName: upstreamTools.remoteName })
    .from(upstreamTools)
    .innerJoin(upstreams, and(eq(upstreams.tenantId, upstreamTools.tenantId), eq(upstreams.name, upstreamTools.upstreamName)))
    .where(and(eq(upstreamTools.tenantId, tenantId), eq(upstreamTools.toolName, toolName)));
  return row;
}

/** How many of the upstream's tools are active. */
export async function activeToolCount(executor: Executor, tenantId: string, upstreamName: string): Promise<number> {
  const [row] = await executor
    .select({ count: sql<number>`count(*)::int` })
    .from(upstreamTools)
    .innerJoin(tools, and(eq(tools.tenantId, upstreamTools.tenantId), eq(tools.name, upstreamTools.toolName)))
    .where(and(eq(upstreamTools.tenantId, tenantId), eq(upstreamTools.upstreamName, upstreamName), eq(tools.status, 'active')));
  return row?.count ?? 0;
}
