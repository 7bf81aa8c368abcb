/** What a call is for: a query waits on a request, indexing runs in the background. */
type EmbedPurpose = 'query' | 'index';

export interface EmbedOptions {
  /** Lets an embedder serve queries ahead of indexing (default: 'index'). */
  purpose?: EmbedPurpose;
  /** Aborted when the caller stops waiting (time budget): work not yet started is dropped. */
  signal?: AbortSignal;
  /** Whose work this is: an in-process encoder serves waiting queries in turns across tenants. */
  tenant?: string;
}

export interface EncoderCounters {
  encoded: Record<EmbedPurpose, number>;
  queued: Record<EmbedPurpose, number>;
}

/** Turns texts into vectors. One implementation per provider; all behind this interface. */
export interface Embedder {
  /** Stable id of the model, stored with every vector (vectors of other models are ignored). */
  readonly model: string;
  /** Embeds texts in order; rejects on failure. */
  embed(texts: string[], options?: EmbedOptions): Promise<number[][]>;
  /** Texts encoded and jobs waiting or running, per purpose (in-process encoders; for metrics). */
  counters?(): EncoderCounters;
  /** Releases threads or connections; the embedder is unusable afterwards. */
  close?(): Promise<void>;
}

/**
 * The embedder refused the texts themselves (HTTP 400, 413 or 422: one too long for the model, say),
 * not because it is down: other texts would go through.
 */
export class EmbeddingRefused extends Error {
  override readonly name = 'EmbeddingRefused';
}

/** Rejects after `ms` so a hung embedder cannot hold a request hostage. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
