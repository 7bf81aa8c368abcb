import { LRUCache } from 'lru-cache';

import type { Principal } from '../auth/principal.js';
import type { RankingMode } from './fusion.js';
import type { DiscoveredTool, DiscoverInput } from './schemas.js';

/** What a discovery answered, minus what is new per request (its id, the log entry). */
export interface CachedShortlist {
  /** The tenant's catalog revision the shortlist was computed at. */
  revision: number;
  tools: readonly DiscoveredTool[];
  shortlistTokens: number;
  catalogTokens: number;
  withheld: number;
  lowConfidence: boolean;
  searchMode: RankingMode;
}

interface ShortlistCacheOptions {
  /** Budget of the cached shortlists, as serialized JSON; 0 disables the cache. */
  maxBytes: number;
  /**
   * How long an entry may be served at an unchanged revision. Everything a shortlist depends on
   * but the popularity prior (allowed calls, written by every authorize) bumps the revision; this
   * bounds how stale that prior may be.
   */
  ttlMs: number;
}

/** Counters the metrics endpoint reads. */
export interface ShortlistCacheStats {
  hits: number;
  misses: number;
}

const deepFreeze = <T>(value: T): T => {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
};

/**
 * Per-replica LRU of whole shortlists, bounded in bytes. An entry is keyed by everything the
 * shortlist is a function of: the caller's tenant and scope set (what it may see), the searched
 * text, mode, format, top_k and filters; and it serves only at the catalog revision it was
 * computed at, which every change to the tenant's tools or their vectors bumps at commit, through
 * any replica (migrations 0012 and 0014). So a hit is what recomputing would return, and no caller
 * can make another see anything it would not compute for itself: the key holds the caller's own
 * visibility, and entries are frozen. Entries are per tenant, as the query-embedding cache's are.
 */
export class ShortlistCache {
  readonly stats: ShortlistCacheStats = { hits: 0, misses: 0 };
  private readonly cache: LRUCache<string, CachedShortlist> | undefined;
  /** Computations in progress, per revision and key. */
  private readonly computing = new Map<string, Promise<{ shortlist: CachedShortlist }>>();

  constructor(options: ShortlistCacheOptions) {
    this.cache =
      options.maxBytes > 0
        ? new LRUCache({
            maxSize: options.maxBytes,
            ttl: options.ttlMs,
            sizeCalculation: (entry) => Math.max(1, JSON.stringify(entry.tools).length),
          })
        : undefined;
  }

  get enabled(): boolean {
    return this.cache !== undefined;
  }

  /** The cache key of a discovery by `principal` whose searched text is `text`. */
  static key(principal: Principal, input: DiscoverInput, text: string): string {
    const filters = input.filters ?? {};
    return JSON.stringify([
      principal.tenant,
      [...principal.scopes].sort(),
      text,
      input.mode,
      input.format,
      input.strict === true,
      input.top_k,
      filters.category ?? null,
      filters.tags ? [...new Set(filters.tags)].sort() : null,
    ]);
  }

  /** The shortlist filed under `key` at `revision`, if any. */
  get(key: string, revision: number): CachedShortlist | undefined {
    if (!this.cache) return undefined;
    const entry = this.cache.get(key);
    if (entry && entry.revision === revision) {
      this.stats.hits += 1;
      return entry;
    }
    this.stats.misses += 1;
    return undefined;
  }

  set(key: string, entry: CachedShortlist): void {
    this.cache?.set(key, deepFreeze(entry));
  }

  /**
   * The shortlist of `key` at `revision`: cached, or from a computation of the same key and
   * revision already in progress (concurrent identical discoveries share one), or from `compute`,
   * filed when `keep` accepts it. `computed` is set only for the caller that computed.
   */
  async resolve<T extends { shortlist: CachedShortlist }>(
    key: string,
    revision: number,
    compute: () => Promise<T>,
    keep: (computed: T) => boolean,
  ): Promise<{ shortlist: CachedShortlist; computed?: T }> {
    if (!this.cache) {
      const computed = await compute();
      return { shortlist: computed.shortlist, computed };
    }
    const hit = this.get(key, revision);
    if (hit) return { shortlist: hit };
    const flight = `${revision}\u0000${key}`;
    const joined = this.computing.get(flight) as Promise<T> | undefined;
    if (joined) return { shortlist: (await joined).shortlist };
    const pending = compute();
    this.computing.set(flight, pending);
    const done = () => void this.computing.delete(flight);
    pending.then(done, done);
    const computed = await pending;
    if (keep(computed)) this.set(key, computed.shortlist);
    return { shortlist: computed.shortlist, computed };
  }
}
