/** Turns texts into vectors. One implementation per provider; all behind this interface. */
export interface Embedder {
  /** Stable id of the model, stored with every vector (vectors of other models are ignored). */
  readonly model: string;
  /** Embeds texts in order; rejects on failure. */
  embed(texts: string[]): Promise<number[][]>;
}

/** Rejects after `ms` so a hung embedder cannot hold a request hostage. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
