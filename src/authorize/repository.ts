import { param, sql } from 'drizzle-orm';

import type { AuditEntry } from '../audit/repository.js';
import { type Executor, rowsOf } from '../db/client.js';
import { auditLog, type ToolRow, tools } from '../db/schema.js';
import type { PolicyRule, ToolDocument } from '../tools/model.js';

/** The columns a decision needs: read fresh for every call, one primary-key lookup. */
export type ToolForDecision = Pick<ToolRow, 'id' | 'name' | 'version' | 'revision' | 'status' | 'requiredScopes'> & Pick<ToolDocument, 'parameters' | 'policy'>;

/** A tool as a call names it. */
export interface ToolKey {
  tenantId: string;
  name: string;
}

/**
 * The current rows of the named tools, one statement for all (a unique-index probe each), in the
 * order of `keys`; undefined where no such tool exists.
 */
export async function findForDecisions(executor: Executor, keys: readonly ToolKey[]): Promise<(ToolForDecision | undefined)[]> {
  if (keys.length === 0) return [];
  const rows = await rowsOf<{ ord: number | string; id: number | string; name: string; version: string; revision: number; status: ToolForDecision['status']; required_scopes: string[]; parameters: Record<string, unknown>; policy: PolicyRule[] | null }>(
    executor.execute(sql`
    select k.ord, t.id, t.name, t.version, t.revision, t.status, t.required_scopes, t.document->'parameters' as parameters, t.document->'policy' as policy
    from unnest(${param(keys.map((k) => k.tenantId))}::text[], ${param(keys.map((k) => k.name))}::text[]) with ordinality as k(tenant_id, name, ord)
    join ${tools} t on t.tenant_id = k.tenant_id and t.name = k.name`),
  );
  const found: (ToolForDecision | undefined)[] = keys.map(() => undefined);
  for (const r of rows) {
    found[Number(r.ord) - 1] = {
      id: Number(r.id),
      name: r.name,
      version: r.version,
      revision: Number(r.revision),
      status: r.status,
      requiredScopes: r.required_scopes,
      parameters: r.parameters,
      policy: r.policy ?? [],
    };
  }
  return found;
}

/** One decision to record: its audit entry and, for an allowed call, the tool whose usage it counts. */
export interface DecisionRecord {
  entry: AuditEntry & { at: Date };
  usage?: { toolId: number };
}

/**
 * Decisions' audit entries and the usage counts of the allowed ones, in one statement: atomic
 * without an explicit transaction, so a batch of decisions costs one round trip and one commit.
 * Usage rows are summed per tool and upserted in key order, so concurrent batches (other replicas)
 * lock the rows they share in the same order and cannot deadlock.
 */
export async function recordDecisions(executor: Executor, records: readonly DecisionRecord[]): Promise<void> {
  if (records.length === 0) return;
  const rows = records.map(({ entry }) => sql`(${entry.tenantId}, ${entry.at}, ${entry.actor ?? null}, ${entry.action}, ${entry.toolName}, ${entry.toolVersion ?? null},
    ${entry.decision ?? null}, ${entry.reasons === undefined || entry.reasons === null ? null : JSON.stringify(entry.reasons)}::jsonb, ${entry.discoveryId ?? null}::uuid)`);
  const audit = sql`insert into ${auditLog} (tenant_id, at, actor, action, tool_name, tool_version, decision, reasons, discovery_id) values ${sql.join(rows, sql`, `)}`;
  const calls = new Map<string, { toolId: number; tenantId: string; calls: number }>();
  for (const { entry, usage } of records) {
    if (!usage) continue;
    const key = `${entry.tenantId}\u0000${usage.toolId}`;
    const counted = calls.get(key);
    if (counted) counted.calls += 1;
    else calls.set(key, { toolId: usage.toolId, tenantId: entry.tenantId, calls: 1 });
  }
  if (calls.size === 0) {
    await executor.execute(audit);
    return;
  }
  const usage = [...calls.values()]
    .sort((a, b) => (a.tenantId < b.tenantId ? -1 : a.tenantId > b.tenantId ? 1 : a.toolId - b.toolId))
    .map((u) => sql`(${u.toolId}::bigint, ${u.tenantId}, ${u.calls}::bigint)`);
  await executor.execute(sql`with audit as (${audit})
    insert into tool_usage (tool_id, tenant_id, calls) values ${sql.join(usage, sql`, `)}
    on conflict (tool_id, tenant_id) do update set calls = tool_usage.calls + excluded.calls, last_called_at = now()`);
}
