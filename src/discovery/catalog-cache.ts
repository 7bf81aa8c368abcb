import { LRUCache } from 'lru-cache';

import type { Executor } from '../db/client.js';
import { catalogRevision } from './catalog-revision.js';
import { type CatalogStats, catalogStats } from './repository.js';

/**
 * Per-replica cache of catalog statistics per (tenant, scope set), valid for one catalog revision.
 * Every lookup reads the tenant's revision (one primary-key row) on the same pool as the
 * statistics: a change made through any replica of the service shows in the next discovery on
 * every replica, and on a read replica the statistics move with the rows it has replayed. No TTL:
 * entries leave by LRU or by a newer revision.
 */
export class CatalogStatsCache {
  private readonly cache: LRUCache<string, CatalogStats>;

  constructor(maxEntries = 1_000) {
    this.cache = new LRUCache({ max: maxEntries });
  }

  async get(executor: Executor, tenantId: string, scopes: readonly string[]): Promise<CatalogStats> {
    const key = `${tenantId}\u0000${scopes.join(' ')}`;
    const cached = this.cache.get(key);
    if (cached && cached.revision === (await catalogRevision(executor, tenantId))) return cached;
    // The statistics carry the revision read in their own statement, so an entry is never filed
    // under a revision it does not describe (whichever pool answered).
    const stats = await catalogStats(executor, tenantId, scopes);
    this.cache.set(key, stats);
    return stats;
  }
}
