import { Worker } from 'node:worker_threads';

import { FairQueue } from '../fair-queue.js';

/** Why a job never reached the encoder. */
export class EncoderBusyError extends Error {
  override readonly name = 'EncoderBusyError';
}

interface Job {
  texts: string[];
  signal: AbortSignal | undefined;
  resolve: (vectors: number[][]) => void;
  reject: (error: Error) => void;
}

type Reply = { ready: true } | { id: number; dims: number; flat: Float32Array } | { id: number; error: string };

interface LaneOptions {
  /**
   * Jobs waiting beyond those in the worker. When they are all taken, the owner holding the most
   * gives up its newest to an owner holding fewer; otherwise the new job is refused at once
   * (EncoderBusyError).
   */
  maxQueue: number;
  /**
   * Queued jobs go to the worker together while their texts add up to at most this many: one
   * model call per batch costs less per text (USE-lite: 15 ms for one query, 38 ms for four).
   */
  batchTexts: number;
  /** Niceness of the worker thread (0 normal, 19 lowest). */
  nice: number;
}

const WORKER_URL = new URL('./local-worker.mjs', import.meta.url);

/** Jobs sent to the worker as one message. */
interface Batch {
  id: number;
  jobs: Job[];
}

/**
 * One encoder worker thread and its bounded queue, served in turns across the jobs' owners
 * (tenants), first come first served within each: one batch in the worker at a time, so a job
 * whose caller gave up (aborted signal) is dropped before it costs anything. Jobs that queued
 * while the worker was busy go together in the next batch. A worker that dies fails its batch and
 * is replaced for the next one.
 */
export class EncoderLane {
  private worker: Worker | undefined;
  private ready: Promise<void> | undefined;
  private readonly queue: FairQueue<Job>;
  private current: Batch | undefined;
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: LaneOptions) {
    this.queue = new FairQueue(options.maxQueue);
  }

  /** Texts embedded so far (for metrics). */
  texts = 0;

  /** Model calls so far (a batch of queued jobs is one). */
  batches = 0;

  /** Starts the worker and waits until its model is loaded and warm. */
  async start(): Promise<void> {
    await this.spawn();
  }

  /** Jobs waiting or running. */
  get depth(): number {
    return this.queue.size + (this.current?.jobs.length ?? 0);
  }

  /** Encodes `texts` for `owner` (a tenant; jobs without one share a turn). */
  run(texts: string[], signal?: AbortSignal, owner = ''): Promise<number[][]> {
    if (this.closed) return Promise.reject(new Error('the local encoder is closed'));
    if (signal?.aborted) return Promise.reject(new EncoderBusyError('the caller stopped waiting before the encoder was free'));
    return new Promise((resolve, reject) => {
      const job: Job = { texts, signal, resolve, reject };
      this.queue.push(owner, job)?.reject(new EncoderBusyError(`the encoder queue is full (${this.options.maxQueue} waiting)`));
      void this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.drain()) job.reject(new Error('the local encoder is closed'));
    this.fail(new Error('the local encoder is closed'));
    this.current = undefined;
    await this.worker?.terminate();
    this.worker = undefined;
  }

  private spawn(): Promise<void> {
    const worker = new Worker(WORKER_URL, { workerData: { nice: this.options.nice } });
    // The worker must never keep the process alive on its own (tests, CLI commands).
    worker.unref();
    this.worker = worker;
    this.ready = new Promise<void>((resolve, reject) => {
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`encoder worker exited (${code}) while loading`)));
      worker.on('message', (reply: Reply) => {
        if ('ready' in reply) resolve();
        else this.settle(reply);
      });
    });
    worker.on('error', (error) => this.lost(worker, error));
    worker.on('exit', (code) => this.lost(worker, new Error(`encoder worker exited (${code})`)));
    return this.ready;
  }

  private settle(reply: Exclude<Reply, { ready: true }>): void {
    const batch = this.current;
    if (!batch || batch.id !== reply.id) return;
    this.current = undefined;
    if ('error' in reply) for (const job of batch.jobs) job.reject(new Error(reply.error));
    else {
      // The batch's rows, in its jobs' order.
      let row = 0;
      for (const job of batch.jobs) {
        const vectors: number[][] = [];
        for (const _ of job.texts) {
          vectors.push(Array.from(reply.flat.subarray(row * reply.dims, (row + 1) * reply.dims)));
          row += 1;
        }
        this.texts += job.texts.length;
        job.resolve(vectors);
      }
    }
    void this.pump();
  }

  /** Fails the batch in the worker, if any. */
  private fail(error: Error): void {
    for (const job of this.current?.jobs ?? []) job.reject(error);
    this.current = undefined;
  }

  private lost(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.fail(error);
    if (!this.closed && this.queue.size > 0) void this.pump();
  }

  /** The next jobs to send: queued ones whose callers still wait, while their texts fit one batch (at least one job). */
  private nextBatch(): Job[] {
    const jobs: Job[] = [];
    let texts = 0;
    while (this.queue.size > 0) {
      const job = this.queue.peek()!;
      if (job.signal?.aborted) {
        this.queue.shift();
        job.reject(new EncoderBusyError('the caller stopped waiting before the encoder was free'));
        continue;
      }
      if (jobs.length > 0 && texts + job.texts.length > this.options.batchTexts) break;
      this.queue.shift();
      jobs.push(job);
      texts += job.texts.length;
    }
    return jobs;
  }

  private async pump(): Promise<void> {
    if (this.current || this.closed) return;
    const jobs = this.nextBatch();
    if (jobs.length === 0) return;
    const running: Batch = { id: this.nextId++, jobs };
    this.current = running;
    try {
      if (!this.worker) await this.spawn();
      else await this.ready;
    } catch (error) {
      if (this.current === running) this.fail(error as Error);
      return;
    }
    if (this.current !== running) return;
    this.batches += 1;
    this.worker!.postMessage({ id: running.id, texts: jobs.flatMap((job) => job.texts) });
  }
}
