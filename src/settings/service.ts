import type { Principal } from '../auth/principal.js';
import type { Db, Executor } from '../db/client.js';
import type { TenantSettingsRow } from '../db/schema.js';
import { AppError } from '../errors.js';
import { isWarningCode, WARNING_CODES, type WarningCode } from '../tools/warnings.js';
import * as repo from './repository.js';
import type { SettingsView } from './schemas.js';

function viewOf(row: TenantSettingsRow | undefined): SettingsView {
  return {
    warnings_as_errors: row?.warningsAsErrors ?? [],
    updated_at: row?.updatedAt.toISOString() ?? null,
    updated_by: row?.updatedBy ?? null,
  };
}

/** Tenant settings: read and replaced by the tenant's administrators, read by publishing. */
export class SettingsService {
  constructor(private readonly db: Db) {}

  /** The caller's tenant settings (defaults when never set). */
  async get(principal: Principal): Promise<SettingsView> {
    return viewOf(await repo.findSettings(this.db, principal.tenant));
  }

  /** Replaces the caller's tenant settings; every code must name a warning (400 naming each that does not). */
  async put(principal: Principal, body: { warnings_as_errors: string[] }): Promise<SettingsView> {
    const unknown = body.warnings_as_errors.flatMap((code, i) => (isWarningCode(code) ? [] : [{ code, i }]));
    if (unknown.length > 0) {
      throw new AppError(
        'validation_failed',
        `unknown warning code ${unknown.map((u) => `'${u.code}'`).join(', ')}; known codes: ${WARNING_CODES.join(', ')}`,
        unknown.map((u) => ({ pointer: `/warnings_as_errors/${u.i}`, message: `unknown warning code '${u.code}'`, in: 'body' as const })),
      );
    }
    const codes = [...new Set(body.warnings_as_errors)].sort();
    return viewOf(await repo.upsertSettings(this.db, principal.tenant, { warningsAsErrors: codes, updatedBy: principal.subject }));
  }

  /**
   * The warnings a tenant refuses, read inside a publish's transaction (so a publish sees the
   * setting as of its own snapshot). Stored codes a later version no longer knows are ignored.
   */
  async warningsAsErrors(executor: Executor, tenantId: string): Promise<WarningCode[]> {
    const row = await repo.findSettings(executor, tenantId);
    return (row?.warningsAsErrors ?? []).filter(isWarningCode);
  }
}
