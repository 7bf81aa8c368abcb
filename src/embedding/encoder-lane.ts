import { Worker } from 'node:worker_threads';

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
  /** Jobs waiting beyond the one in the worker; more are refused at once (EncoderBusyError). */
  maxQueue: number;
  /** Niceness of the worker thread (0 normal, 19 lowest). */
  nice: number;
}

const WORKER_URL = new URL('./local-worker.mjs', import.meta.url);

/**
 * One encoder worker thread and its bounded FIFO queue: one job in the worker at a time, so a
 * job whose caller gave up (aborted signal) is dropped before it costs anything. A worker that
 * dies fails its job and is replaced for the next one.
 */
export class EncoderLane {
  private worker: Worker | undefined;
  private ready: Promise<void> | undefined;
  private readonly queue: Job[] = [];
  private current: (Job & { id: number }) | undefined;
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: LaneOptions) {}

  /** Texts embedded so far (for metrics). */
  texts = 0;

  /** Starts the worker and waits until its model is loaded and warm. */
  async start(): Promise<void> {
    await this.spawn();
  }

  /** Jobs waiting or running. */
  get depth(): number {
    return this.queue.length + (this.current ? 1 : 0);
  }

  run(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    if (this.closed) return Promise.reject(new Error('the local encoder is closed'));
    if (signal?.aborted) return Promise.reject(new EncoderBusyError('the caller stopped waiting before the encoder was free'));
    if (this.queue.length >= this.options.maxQueue) return Promise.reject(new EncoderBusyError(`the encoder queue is full (${this.options.maxQueue} waiting)`));
    return new Promise((resolve, reject) => {
      this.queue.push({ texts, signal, resolve, reject });
      void this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('the local encoder is closed'));
    this.current?.reject(new Error('the local encoder is closed'));
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
    const job = this.current;
    if (!job || job.id !== reply.id) return;
    this.current = undefined;
    {
      if ('error' in reply) job.reject(new Error(reply.error));
      else {
        const vectors: number[][] = [];
        for (let i = 0; i < job.texts.length; i += 1) vectors.push(Array.from(reply.flat.subarray(i * reply.dims, (i + 1) * reply.dims)));
        this.texts += job.texts.length;
        job.resolve(vectors);
      }
    }
    void this.pump();
  }

  private lost(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.current?.reject(error);
    this.current = undefined;
    if (!this.closed && this.queue.length > 0) void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.current || this.closed) return;
    let job = this.queue.shift();
    while (job?.signal?.aborted) {
      job.reject(new EncoderBusyError('the caller stopped waiting before the encoder was free'));
      job = this.queue.shift();
    }
    if (!job) return;
    const running = { ...job, id: this.nextId++ };
    this.current = running;
    try {
      if (!this.worker) await this.spawn();
      else await this.ready;
    } catch (error) {
      this.current = undefined;
      job.reject(error as Error);
      return;
    }
    if (this.current === running) this.worker!.postMessage({ id: running.id, texts: job.texts });
  }
}
