import { LRUCache } from 'lru-cache';

import { type Embedder, withTimeout } from './provider.js';

/** Counters the metrics endpoint reads. */
export interface QueryEmbeddingStats {
  hits: number;
  misses: number;
  failures: number;
}

/**
 * Query embeddings through a bounded LRU (per replica) with a time budget: a slow or failing
 * embedder yields `undefined` and discovery falls back to lexical search. Entries are the
 * tenant's own: a hit (faster, and counted in /metrics) must never tell one tenant that another
 * asked the same phrase.
 */
export class QueryEmbeddings {
  readonly stats: QueryEmbeddingStats = { hits: 0, misses: 0, failures: 0 };
  private readonly cache: LRUCache<string, number[]>;

  constructor(
    private readonly embedder: Embedder,
    private readonly timeoutMs: number,
    maxEntries = 10_000,
  ) {
    this.cache = new LRUCache({ max: maxEntries });
  }

  get model(): string {
    return this.embedder.model;
  }

  /** Queries waiting for an in-process encoder (0 for a remote one, or when it is free). */
  get queued(): number {
    return this.embedder.counters?.().queued.query ?? 0;
  }

  /** Whether the tenant's query vector is cached: `embed` will answer it at once. */
  has(tenant: string, query: string): boolean {
    return this.cache.has(JSON.stringify([tenant, query]));
  }

  /** The query's vector for a tenant, or undefined when the embedder failed or ran out of time. */
  async embed(tenant: string, query: string): Promise<number[] | undefined> {
    const key = JSON.stringify([tenant, query]);
    const cached = this.cache.get(key);
    if (cached) {
      this.stats.hits += 1;
      return cached;
    }
    this.stats.misses += 1;
    try {
      const [vector] = await withTimeout(this.embedder.embed([query], { purpose: 'query', tenant, signal: AbortSignal.timeout(this.timeoutMs) }), this.timeoutMs, 'query embedding');
      if (!vector) throw new Error('embedder returned no vector');
      this.cache.set(key, vector);
      return vector;
    } catch {
      this.stats.failures += 1;
      return undefined;
    }
  }
}
