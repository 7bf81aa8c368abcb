import { createHash } from 'node:crypto';

import type { Embedder } from '../../src/embedding/provider.js';

const DIMS = 64;

/**
 * A deterministic bag-of-words embedder for tests: texts sharing words get similar vectors.
 * Not semantic; tests that need meaning use the real local model.
 */
export class HashingEmbedder implements Embedder {
  readonly model = 'test-hashing-64';
  calls = 0;

  async embed(texts: string[]): Promise<number[][]> {
    this.calls += 1;
    return texts.map((text) => {
      const vector = new Array<number>(DIMS).fill(0);
      for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
        const digest = createHash('sha1').update(word.replace(/s$/, '')).digest();
        vector[digest[0]! % DIMS]! += digest[1]! % 2 === 0 ? 1 : -1;
      }
      const norm = Math.hypot(...vector) || 1;
      return vector.map((x) => x / norm);
    });
  }
}

/** An embedder that fails (or hangs) until `healthy` is set, for degradation tests. */
export class FlakyEmbedder implements Embedder {
  readonly model = 'test-hashing-64';
  healthy = false;
  hang = false;
  private readonly inner = new HashingEmbedder();

  async embed(texts: string[]): Promise<number[][]> {
    if (this.hang) return new Promise(() => undefined);
    if (!this.healthy) throw new Error('embedder unavailable');
    return this.inner.embed(texts);
  }
}
