import { LRUCache } from 'lru-cache';

import type { Executor } from '../db/client.js';
import { type CatalogStats, catalogStats } from './repository.js';

/**
 * Per-replica cache of catalog statistics per (tenant, scope set), valid for one catalog revision.
 * Every lookup names the tenant's revision (one primary-key row the discovery reads first) from the
 * same pool as the statistics: a change made through any replica of the service shows in the next discovery on
 * every replica, and on a read replica the statistics move with the rows it has replayed. No TTL:
 * entries leave by LRU or by a newer revision.
 */
export class CatalogStatsCache {
  private readonly cache: LRUCache<string, CatalogStats>;

  constructor(maxEntries = 1_000) {
    this.cache = new LRUCache({ max: maxEntries });
  }

  /** The statistics at `revision`, the tenant's catalog revision the caller just read on `executor`. */
  async get(executor: Executor, tenantId: string, scopes: readonly string[], revision: number): Promise<CatalogStats> {
    // JSON, not a joined string: a scope may itself contain a space, and two scope sets must never share an entry.
    const key = JSON.stringify([tenantId, scopes]);
    const cached = this.cache.get(key);
    if (cached && cached.revision === revision) return cached;
    // The statistics carry the revision read in their own statement, so an entry is never filed
    // under a revision it does not describe (whichever pool answered).
    const stats = await catalogStats(executor, tenantId, scopes);
    this.cache.set(key, stats);
    return stats;
  }
}
