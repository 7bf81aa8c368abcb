/**
 * Indexing throughput of the local encoder (USE-lite in worker threads), in-process and without a
 * database: the texts the indexer would embed for real-shaped tools (the bench's real catalog,
 * src/embedding/embedding-texts.ts), sent the way the indexer sends them (one call per batch of
 * 64 tools, identical texts once per call), split into chunks spread round-robin over the index
 * threads. Prints texts/s (wall) and texts per CPU-second (every thread of the process: on a
 * shared machine the wall figure moves with the neighbours' load, the CPU figure much less) for
 * each setting, and what 10,000 tools' texts would take at that rate.
 *
 * Usage: npx tsx scripts/encoder-throughput.ts [--tools 200] [--threads 1,2] [--chunks 16]
 *   [--max-chars 512] [--order given,length] [--service]
 *        npx tsx scripts/encoder-throughput.ts --queries
 * --order given: chunks in the indexer's order (a tool's card, parameters, aliases... then the next
 * tool's); length: texts sorted by length first, so a chunk holds texts of similar length (the
 * model pads each chunk to its longest text). --service also times LocalEmbedder itself with its
 * defaults (the path the indexer takes). --queries measures the query lane instead (measureQueries).
 */
import { parseArgs } from 'node:util';

import { cardEmbeddingTexts } from '../src/embedding/embedding-texts.js';
import { EncoderLane } from '../src/embedding/encoder-lane.js';
import { boundText, LocalEmbedder } from '../src/embedding/local.js';
import { searchTexts } from '../src/tools/lexical/search-text.js';
import { ToolValidator } from '../src/tools/validation.js';
import { generateRealTools, realRequestText } from './bench/real-catalog.js';

/* eslint-disable no-console -- a script's output is its interface */

const { values } = parseArgs({
  options: {
    tools: { type: 'string', default: '200' },
    threads: { type: 'string', default: '1,2' },
    chunks: { type: 'string', default: '16' },
    'max-chars': { type: 'string', default: '512' },
    order: { type: 'string', default: 'given,length' },
    seed: { type: 'string', default: '1' },
    service: { type: 'boolean', default: false },
    queries: { type: 'boolean', default: false },
  },
});
const list = (value: string) => value.split(',').map((v) => v.trim()).filter(Boolean);
const numbers = (value: string) => list(value).map(Number);

/** Tools per indexer batch (DEFAULT_INDEXER_OPTIONS.batchSize). */
const INDEXER_BATCH = 64;
const TARGET_TOOLS = 10_000;

/** The texts of each indexer batch, as the indexer builds them (deduplicated within the batch). */
function indexerBatches(count: number, seed: number): string[][] {
  const validator = new ToolValidator({ descriptionLength: 1024, summaryLength: 200, schemaDepth: 32 });
  const perTool = generateRealTools(seed, 0, count).map((raw) => {
    const result = validator.validate(raw);
    if (!result.ok) throw new Error(`generated tool ${raw.name} is invalid`);
    const doc = result.document;
    return cardEmbeddingTexts({ ...doc, parameters: searchTexts(doc).params });
  });
  const batches: string[][] = [];
  for (let i = 0; i < perTool.length; i += INDEXER_BATCH) batches.push([...new Set(perTool.slice(i, i + INDEXER_BATCH).flat())]);
  return batches;
}

interface Setting {
  threads: number;
  chunk: number;
  maxChars: number;
  order: string;
}

interface Result {
  texts: number;
  wallMs: number;
  cpuMs: number;
}

/** Embeds every batch through `threads` index lanes (nice 0: the measurement competes fairly). */
async function measure(lanes: EncoderLane[], batches: string[][], setting: Setting): Promise<Result> {
  let texts = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const batch of batches) {
    let unique = [...new Set(batch.map((t) => boundText(t, setting.maxChars)))];
    if (setting.order === 'length') unique = unique.sort((a, b) => a.length - b.length);
    const chunks: Promise<number[][]>[] = [];
    for (let i = 0; i < unique.length; i += setting.chunk) chunks.push(lanes[(i / setting.chunk) % lanes.length]!.run(unique.slice(i, i + setting.chunk)));
    await Promise.all(chunks);
    texts += unique.length;
  }
  const used = process.cpuUsage(cpu);
  return { texts, wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

function row(label: string, result: Result, textsForTarget: number): string {
  const perSecond = result.texts / (result.wallMs / 1000);
  const perCpuSecond = result.texts / (result.cpuMs / 1000);
  return `${label.padEnd(34)} ${String(result.texts).padStart(6)} ${perSecond.toFixed(1).padStart(9)} ${perCpuSecond.toFixed(1).padStart(9)} ${(textsForTarget / perSecond).toFixed(0).padStart(10)}`;
}

/** Indexing: every batch of `--tools` real tools, per setting. */
async function measureIndexing(): Promise<void> {
  const toolCount = Number(values.tools);
  const batches = indexerBatches(toolCount, Number(values.seed));
  const sample = batches.flat();
  const TEXTS_FOR_TARGET = (sample.length / toolCount) * TARGET_TOOLS;
  const lengths = sample.map((t) => t.length).sort((a, b) => a - b);
  const at = (q: number) => lengths[Math.min(lengths.length - 1, Math.floor(q * lengths.length))];
  console.log(`${toolCount} real tools (seed ${values.seed}): ${sample.length} texts (${(sample.length / toolCount).toFixed(2)} a tool), characters p10/p50/p90/max ${at(0.1)}/${at(0.5)}/${at(0.9)}/${at(1)}`);
  console.log(`${'setting'.padEnd(34)} ${'texts'.padStart(6)} ${'texts/s'.padStart(9)} ${'texts/cpu-s'.padStart(9)} ${'10k tools s'.padStart(10)}`);

  for (const threads of numbers(values.threads)) {
    // batchTexts 1: each chunk measured is one model call, never merged with the next queued one.
    const lanes = Array.from({ length: threads }, () => new EncoderLane({ maxQueue: 10_000, nice: 0, batchTexts: 1 }));
    await Promise.all(lanes.map((lane) => lane.start()));
    // One small warm-up pass: the first calls of a worker compile kernels.
    await measure(lanes, [sample.slice(0, 32)], { threads, chunk: 16, maxChars: 512, order: 'given' });
    for (const maxChars of numbers(values['max-chars'])) {
      for (const chunk of numbers(values.chunks)) {
        for (const order of list(values.order)) {
          const setting = { threads, chunk, maxChars, order };
          console.log(row(`threads ${threads} chunk ${chunk} chars ${maxChars} ${order}`, await measure(lanes, batches, setting), TEXTS_FOR_TARGET));
        }
      }
    }
    await Promise.all(lanes.map((lane) => lane.close()));
  }

  if (values.service) {
    for (const threads of numbers(values.threads)) {
      for (const maxChars of numbers(values['max-chars'])) {
        const embedder = await LocalEmbedder.load({ indexThreads: threads, maxChars, indexNice: 0 });
        await embedder.embed(sample.slice(0, 32), { purpose: 'index' });
        const cpu = process.cpuUsage();
        const started = performance.now();
        let texts = 0;
        for (const batch of batches) {
          await embedder.embed(batch, { purpose: 'index' });
          texts += batch.length; // batches are deduplicated already
        }
        const used = process.cpuUsage(cpu);
        console.log(row(`LocalEmbedder threads ${threads} chars ${maxChars}`, { texts, wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 }, TEXTS_FOR_TARGET));
        await embedder.close();
      }
    }
  }
}

/**
 * New requests: the bench's 15-30 word request texts through one query lane for 5 s per setting,
 * one model call per text (the service's QUERY_BATCH) and with up to 8 queued queries per call, by 1
 * and by 32 concurrent callers.
 */
async function measureQueries(): Promise<void> {
  const texts = Array.from({ length: 10_000 }, (_, i) => realRequestText(Number(values.seed), i));
  console.log(`${'query lane'.padEnd(34)} ${'callers'.padStart(7)} ${'queries/s'.padStart(9)} ${'p50 ms'.padStart(7)}`);
  let next = 0;
  for (const batchTexts of [1, 8]) {
    const lane = new EncoderLane({ maxQueue: 10_000, nice: 0, batchTexts });
    await lane.start();
    for (let i = 0; i < 10; i++) await lane.run([texts[next++ % texts.length]!]);
    for (const callers of [1, 32]) {
      const latencies: number[] = [];
      const end = performance.now() + 5_000;
      await Promise.all(Array.from({ length: callers }, async () => {
        while (performance.now() < end) {
          const started = performance.now();
          await lane.run([texts[next++ % texts.length]!]);
          latencies.push(performance.now() - started);
        }
      }));
      latencies.sort((a, b) => a - b);
      const p50 = latencies[Math.floor(latencies.length / 2)]!;
      console.log(`${`batch up to ${batchTexts}`.padEnd(34)} ${String(callers).padStart(7)} ${(latencies.length / 5).toFixed(1).padStart(9)} ${p50.toFixed(1).padStart(7)}`);
    }
    await lane.close();
  }
}

if (values.queries) await measureQueries();
else await measureIndexing();
