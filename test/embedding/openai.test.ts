import { afterEach, describe, expect, it, vi } from 'vitest';

import { OpenAiEmbedder, type OpenAiEmbedderOptions } from '../../src/embedding/openai.js';
import { EmbeddingRefused } from '../../src/embedding/provider.js';

// What is real: the embedder's request and its reading of the answer; fetch is a stub that
// records the call and answers as an OpenAI-compatible endpoint would (or would not).

const options = (overrides: Partial<OpenAiEmbedderOptions> = {}): OpenAiEmbedderOptions => ({
  url: 'https://embeddings.example/v1',
  model: 'text-embedding-3-small',
  apiKey: 'sk-test',
  timeoutMs: 5_000,
  ...overrides,
});

type Call = { url: string; init: RequestInit };

/** Stubs the global fetch with `answer`, recording every call. */
function stubFetch(answer: (call: Call) => Promise<Response> | Response): Call[] {
  const calls: Call[] = [];
  vi.stubGlobal('fetch', vi.fn(async (url: string, init: RequestInit) => {
    const call = { url, init };
    calls.push(call);
    return answer(call);
  }));
  return calls;
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('OpenAiEmbedder', () => {
  it('names its vectors after the configured model', () => {
    expect(new OpenAiEmbedder(options()).model).toBe('openai:text-embedding-3-small');
  });

  it('posts every text in one request with the model, JSON content type and bearer key', async () => {
    const calls = stubFetch(() => json({ data: [{ index: 0, embedding: [1, 0] }, { index: 1, embedding: [0, 1] }] }));
    await new OpenAiEmbedder(options()).embed(['refund an order', 'weather tomorrow']);

    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call!.url).toBe('https://embeddings.example/v1/embeddings');
    expect(call!.init.method).toBe('POST');
    expect(call!.init.headers).toEqual({ 'content-type': 'application/json', authorization: 'Bearer sk-test' });
    expect(JSON.parse(call!.init.body as string)).toEqual({ model: 'text-embedding-3-small', input: ['refund an order', 'weather tomorrow'] });
    expect(call!.init.signal).toBeInstanceOf(AbortSignal);
  });

  it('sends no authorization header without an API key (a local endpoint)', async () => {
    const calls = stubFetch(() => json({ data: [{ index: 0, embedding: [1] }] }));
    await new OpenAiEmbedder(options({ apiKey: undefined })).embed(['x']);
    expect(calls[0]!.init.headers).toEqual({ 'content-type': 'application/json' });
  });

  it('accepts the base URL with trailing slashes or the endpoint itself', async () => {
    const calls = stubFetch(() => json({ data: [{ index: 0, embedding: [1] }] }));
    await new OpenAiEmbedder(options({ url: 'http://localhost:11434/v1//' })).embed(['x']);
    await new OpenAiEmbedder(options({ url: 'http://tei.internal/v1/embeddings' })).embed(['x']);
    expect(calls.map((c) => c.url)).toEqual(['http://localhost:11434/v1/embeddings', 'http://tei.internal/v1/embeddings']);
  });

  it('returns the vectors in input order whatever order the endpoint lists them in', async () => {
    stubFetch(() => json({ data: [{ index: 2, embedding: [2] }, { index: 0, embedding: [0] }, { index: 1, embedding: [1] }] }));
    expect(await new OpenAiEmbedder(options()).embed(['a', 'b', 'c'])).toEqual([[0], [1], [2]]);
  });

  it('makes no request for no texts', async () => {
    const calls = stubFetch(() => json({ data: [] }));
    expect(await new OpenAiEmbedder(options()).embed([])).toEqual([]);
    expect(calls).toHaveLength(0);
  });

  it('says the endpoint refused the texts themselves when it answers 400, 413 or 422', async () => {
    for (const status of [400, 413, 422]) {
      stubFetch(() => json({ error: { message: 'input too long' } }, status));
      await expect(new OpenAiEmbedder(options()).embed(['x'])).rejects.toThrow(new EmbeddingRefused(`embedding endpoint refused the texts (${status})`));
    }
  });

  it('rejects with the status when the endpoint answers an error', async () => {
    stubFetch(() => json({ error: { message: 'rate limited' } }, 429));
    await expect(new OpenAiEmbedder(options()).embed(['x'])).rejects.toThrow('embedding endpoint answered 429');
  });

  it('rejects a body without data or with a vector count other than the texts sent', async () => {
    stubFetch(() => json({ object: 'list' }));
    await expect(new OpenAiEmbedder(options()).embed(['x'])).rejects.toThrow('embedding endpoint returned an unexpected body');
    stubFetch(() => json({ data: [{ index: 0, embedding: [1] }] }));
    await expect(new OpenAiEmbedder(options()).embed(['x', 'y'])).rejects.toThrow('embedding endpoint returned an unexpected body');
  });

  it('aborts a request that outlasts the timeout', async () => {
    // The stub never answers: only the request's own signal can end it.
    stubFetch(({ init }) => new Promise<Response>((_, reject) => init.signal!.addEventListener('abort', () => reject(init.signal!.reason))));
    const started = performance.now();
    await expect(new OpenAiEmbedder(options({ timeoutMs: 50 })).embed(['x'])).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
