import { and, eq, sql } from 'drizzle-orm';

import type { AuditEntry } from '../audit/repository.js';
import type { Executor } from '../db/client.js';
import { auditLog, tools } from '../db/schema.js';
import type { PolicyRule } from '../tools/policy-rule.js';

/** The columns a decision needs: read fresh for every call, one primary-key lookup. */
export interface ToolForDecision {
  id: number;
  name: string;
  version: string;
  revision: number;
  status: 'active' | 'retired';
  requiredScopes: string[];
  parameters: Record<string, unknown>;
  policy: PolicyRule[];
}

export async function findForDecision(executor: Executor, tenantId: string, name: string): Promise<ToolForDecision | undefined> {
  const [row] = await executor
    .select({
      id: tools.id,
      name: tools.name,
      version: tools.version,
      revision: tools.revision,
      status: tools.status,
      requiredScopes: tools.requiredScopes,
      parameters: sql<Record<string, unknown>>`${tools.document}->'parameters'`,
      policy: sql<PolicyRule[] | null>`${tools.document}->'policy'`,
    })
    .from(tools)
    .where(and(eq(tools.tenantId, tenantId), eq(tools.name, name)));
  return row ? { ...row, policy: row.policy ?? [] } : undefined;
}

/** One more allowed call of a tool in its tenant's usage count. */
const countCallSql = (toolId: number, tenantId: string) => sql`
  insert into tool_usage (tool_id, tenant_id, calls) values (${toolId}, ${tenantId}, 1)
  on conflict (tool_id, tenant_id) do update set calls = tool_usage.calls + 1, last_called_at = now()`;

/**
 * A decision's audit entry and, for an allowed call, its usage count, in one statement: atomic
 * without an explicit transaction, so a decision costs one round trip and one commit.
 */
export async function recordDecision(executor: Executor, entry: AuditEntry, usage: { toolId: number } | undefined): Promise<void> {
  const audit = sql`insert into ${auditLog} (tenant_id, actor, action, tool_name, tool_version, decision, reasons, discovery_id)
    values (${entry.tenantId}, ${entry.actor ?? null}, ${entry.action}, ${entry.toolName}, ${entry.toolVersion ?? null}, ${entry.decision ?? null},
            ${entry.reasons === undefined || entry.reasons === null ? null : JSON.stringify(entry.reasons)}::jsonb, ${entry.discoveryId ?? null}::uuid)`;
  if (!usage) {
    await executor.execute(audit);
    return;
  }
  await executor.execute(sql`with audit as (${audit}) ${countCallSql(usage.toolId, entry.tenantId)}`);
}

/** Counts one allowed call of a tool. */
export async function countCall(executor: Executor, toolId: number, tenantId: string): Promise<void> {
  await executor.execute(countCallSql(toolId, tenantId));
}
