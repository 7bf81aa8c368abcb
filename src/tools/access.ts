/**
 * The access rule, in one place: who may see a tool. A caller sees a tool of its own tenant that is
 * active and whose `required_scopes` it holds every one of; a publisher managing its tenant (GET and
 * listing /v1/tools) sees every tool of the tenant, retired ones on request. Usage (discovery,
 * authorize, MCP) always follows the caller's scopes, publisher or not.
 *
 * Both forms live here side by side: the SQL predicates every query that reads tools or postings
 * carries, and the in-process checks for a row already read. Change one, change the other (and the
 * table in test/tools/access.test.ts, which runs the same cases through both).
 */
import { and, eq, param, type SQL, sql } from 'drizzle-orm';

import { isPublisher, type Principal } from '../auth/principal.js';
import { type ToolRow, tools } from '../db/schema.js';

/** Who may see what: a scope set, or null for a publisher who sees the whole tenant. */
export interface Visibility {
  tenantId: string;
  scopes: readonly string[] | null;
  includeRetired: boolean;
}

/** What a caller may use (discover, describe, authorize): its own scopes, active tools only. */
export function usableBy(principal: Principal): Visibility {
  return { tenantId: principal.tenant, scopes: principal.scopes, includeRetired: false };
}

/** What a caller sees when it manages the catalog: a publisher the whole tenant (retired tools on request). */
export function seenBy(principal: Principal, includeRetired: boolean): Visibility {
  const publisher = isPublisher(principal);
  return { tenantId: principal.tenant, scopes: publisher ? null : principal.scopes, includeRetired: publisher && includeRetired };
}

// ---- in process ----------------------------------------------------------------------------

/** True when `held` contains every scope of `required` (SQL: `required <@ held`). */
export function holdsScopes(held: readonly string[], required: readonly string[]): boolean {
  return required.every((scope) => held.includes(scope));
}

/** The scopes of `required` that `held` lacks (for the audit log, never for the caller). */
export function missingScopes(held: readonly string[], required: readonly string[]): string[] {
  return required.filter((scope) => !held.includes(scope));
}

type AccessRow = Pick<ToolRow, 'tenantId' | 'status' | 'requiredScopes'>;

/** The in-process form of `visibleTo(visibility)` for one row. */
export function isVisible(visibility: Visibility, row: AccessRow): boolean {
  if (row.tenantId !== visibility.tenantId) return false;
  if (!visibility.includeRetired && row.status !== 'active') return false;
  return visibility.scopes === null || holdsScopes(visibility.scopes, row.requiredScopes);
}

/** Whether a caller may see a tool at all: the one rule behind GET, listing and 404s. */
export function canSee(principal: Principal, row: AccessRow): boolean {
  return isVisible(seenBy(principal, true), row);
}

/** Whether a caller may use a tool (describe_tool, the model's view): publisher or not, its scopes decide. */
export function mayUse(principal: Principal, row: AccessRow): boolean {
  return isVisible(usableBy(principal), row);
}

// ---- in SQL --------------------------------------------------------------------------------

/** A text[] literal built from bound parameters; `array[]::text[]` when empty. */
// One array parameter, not one per element: a caller with a hundred scopes made drizzle build and
// the driver send a hundred parameters in every statement (~0.5 ms of a shortlist fetch).
function textArray(values: readonly string[]): SQL {
  return sql`${param([...values])}::text[]`;
}

/** SQL: the tool's required scopes are all held (`required_scopes <@ scopes`). */
// Not drizzle's arrayContained: it throws on an empty list, and a caller without scopes must
// still see the tools that need none (`'{}' <@ '{}'` is true).
export function scopesHeld(scopes: readonly string[]): SQL {
  return sql`${tools.requiredScopes} <@ ${textArray(scopes)}`;
}

/** The SQL predicate of the security filter shared by listing and every retrieval leg. */
export function visibleTo(visibility: Visibility): SQL | undefined {
  return and(
    eq(tools.tenantId, visibility.tenantId),
    visibility.includeRetired ? undefined : eq(tools.status, 'active'),
    visibility.scopes === null ? undefined : scopesHeld(visibility.scopes),
  );
}

/**
 * The same security filter for BM25 postings, which carry their tool's tenant and the number of
 * its scope set (migration 0015; copied in the transaction of every change) and exist only for
 * active tools. `scopeSets` are the numbers of the tenant's scope sets the caller holds
 * (`heldScopeSets`), inlined as a constant so PostgreSQL hashes the lookup; ignored when
 * `visibility.scopes` is null (no scope filter).
 */
export function postingVisibleTo(visibility: Visibility, posting: string, scopeSets: readonly number[]): SQL {
  if (visibility.includeRetired) throw new Error('postings exist only for active tools');
  const alias = sql.raw(posting);
  if (visibility.scopes === null) return sql`${alias}.tenant_id = ${visibility.tenantId}`;
  const ids = scopeSets.map((id) => {
    if (!Number.isSafeInteger(id)) throw new Error(`bad scope set number ${id}`);
    return String(id);
  });
  return sql`${alias}.tenant_id = ${visibility.tenantId} and ${alias}.scope_set = any(${sql.raw(`'{${ids.join(',')}}'::int[]`)})`;
}

/** SQL for the numbers of the tenant's scope sets that `scopes` hold (every one a tool requires). */
export function heldScopeSets(tenantId: string, scopes: readonly string[]): SQL {
  return sql`(select coalesce(array_agg(s.id order by s.id), '{}') from scope_sets s where s.tenant_id = ${tenantId} and s.scopes <@ ${textArray(scopes)})`;
}
