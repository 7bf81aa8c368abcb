import type { Executor } from '../db/client.js';
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
   * The tenant's discoveries, newest first. The log is written in batches: a caller's own
   * discoveries of a moment ago are listed too (on the primary at once; on a read replica once it
   * has replayed them).
   */
  async recent(tenantId: string, options: { limit: number; before?: Date; poorOnly: boolean }): Promise<DiscoveryLogRow[]> {
    await this.log.flush();
    return listDiscoveries(this.reads, tenantId, options);
  }
}
