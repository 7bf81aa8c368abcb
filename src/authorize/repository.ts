import { and, eq, sql } from 'drizzle-orm';

import { type Executor, rowsOf } from '../db/client.js';
import { discoveryLog, tools } from '../db/schema.js';
import type { PolicyRule } from './policy.js';

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

/** The query and shortlist of one of the tenant's discoveries (never another tenant's). */
export async function findDiscovery(executor: Executor, tenantId: string, id: string): Promise<{ query: string; names: string[] } | undefined> {
  const rows = await rowsOf<{ query: string; shortlist: { name: string }[] }>(
    executor.execute(sql`select query, shortlist from ${discoveryLog} where id = ${id} and tenant_id = ${tenantId}`),
  );
  const row = rows[0];
  return row ? { query: row.query, names: row.shortlist.map((t) => t.name) } : undefined;
}
