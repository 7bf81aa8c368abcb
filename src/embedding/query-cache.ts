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
 * embedder yields `undefined` and discovery falls back to lexical search.
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

  /** The query's vector, or undefined when the embedder failed or ran out of time. */
  async embed(query: string): Promise<number[] | undefined> {
    const cached = this.cache.get(query);
    if (cached) {
      this.stats.hits += 1;
      return cached;
    }
    this.stats.misses += 1;
    try {
      const [vector] = await withTimeout(this.embedder.embed([query], { purpose: 'query', signal: AbortSignal.timeout(this.timeoutMs) }), this.timeoutMs, 'query embedding');
      if (!vector) throw new Error('embedder returned no vector');
      this.cache.set(query, vector);
      return vector;
    } catch {
      this.stats.failures += 1;
      return undefined;
    }
  }
}
