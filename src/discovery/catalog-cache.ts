import { LRUCache } from 'lru-cache';

import type { Executor } from '../db/client.js';
import { type CatalogStats, catalogStats } from './repository.js';

/**
 * Per-replica cache of catalog statistics per (tenant, scope set). Local writes invalidate the
 * tenant at once; writes on other replicas show up within the TTL.
 */
export class CatalogStatsCache {
  private readonly cache: LRUCache<string, CatalogStats>;

  constructor(ttlMs = 5_000, maxEntries = 1_000) {
    this.cache = new LRUCache({ max: maxEntries, ttl: ttlMs });
  }

  async get(executor: Executor, tenantId: string, scopes: readonly string[]): Promise<CatalogStats> {
    const key = `${tenantId}\u0000${scopes.join(' ')}`;
    const cached = this.cache.get(key);
    if (cached) return cached;
    const stats = await catalogStats(executor, tenantId, scopes);
    this.cache.set(key, stats);
    return stats;
  }

  invalidate(tenantId: string): void {
    const prefix = `${tenantId}\u0000`;
    for (const key of [...this.cache.keys()]) if (key.startsWith(prefix)) this.cache.delete(key);
  }
}
