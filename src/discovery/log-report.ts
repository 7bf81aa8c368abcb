import type { Executor } from '../db/client.js';
import { keysetPage } from '../db/keyset-page.js';
import { type DiscoveryLogRow, listDiscoveries } from './log-repository.js';
import type { DiscoveryLogWriter } from './log-writer.js';

/** Publishers' report of a tenant's recent discoveries (GET /v1/discoveries). */
export class DiscoveryReport {
  constructor(
    /** Where the report reads (the read replica when configured). */
    private readonly reads: Executor,
    private readonly log: Pick<DiscoveryLogWriter, 'flush'>,
  ) {}

  /**
   * One page of the tenant's discoveries, newest first, and the time to pass as `before` for the
   * next (null: the last page; a `poorOnly` page examines at most POOR_SCAN_ROWS discoveries, so it
   * may hold fewer than `limit`, or none, and still name a next page). The log is written in
   * batches: a caller's own discoveries of a moment ago are listed too (on the primary at once; on
   * a read replica once it has replayed them).
   */
  async recent(tenantId: string, options: { limit: number; before?: Date; poorOnly: boolean }): Promise<{ rows: DiscoveryLogRow[]; nextBefore: Date | null }> {
    await this.log.flush();
    const { rows, examinedTo } = await listDiscoveries(this.reads, tenantId, { ...options, limit: options.limit + 1 });
    const { rows: page, next } = keysetPage(rows, options.limit, (row) => row.at, examinedTo);
    return { rows: page, nextBefore: next };
  }
}
