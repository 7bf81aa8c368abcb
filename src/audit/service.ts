import type { Static } from 'typebox';

import type { Executor } from '../db/client.js';
import { keysetPage } from '../db/keyset-page.js';
import { type AuditRow, listAudit } from './repository.js';
import type { AuditListQuery } from './schemas.js';

type AuditQuery = Static<typeof AuditListQuery>;

/** Publishers' reading of their tenant's audit log. */
export class AuditService {
  /** `reads`: where listings read (the read replica when configured). */
  constructor(private readonly reads: Executor) {}

  /**
   * One page of the tenant's audit log, newest first, and the id to pass as `before` for the next
   * (null: last page). A filtered page examines at most AUDIT_SCAN_ROWS records, so it may hold
   * fewer than `limit` entries, or none, and still name a next page.
   */
  async page(tenantId: string, query: AuditQuery): Promise<{ rows: AuditRow[]; nextBefore: number | null }> {
    const { rows, examinedTo } = await listAudit(this.reads, tenantId, { ...query, limit: query.limit + 1 });
    const { rows: page, next } = keysetPage(rows, query.limit, (row) => row.id, examinedTo);
    return { rows: page, nextBefore: next };
  }
}
