import { type Embedder, EmbeddingRefused } from './provider.js';

export interface OpenAiEmbedderOptions {
  url: string;
  model: string;
  apiKey: string | undefined;
  timeoutMs: number;
}

interface EmbeddingsResponse {
  data: { index: number; embedding: number[] }[];
}

// What an endpoint answers for input it will not embed (a text over the model's length, for one).
const REFUSED = new Set([400, 413, 422]);

const isResponse = (body: unknown): body is EmbeddingsResponse =>
  typeof body === 'object' && body !== null && Array.isArray((body as EmbeddingsResponse).data);

/** Any OpenAI-compatible `/v1/embeddings` endpoint (OpenAI, Azure, vLLM, Ollama, TEI...). */
export class OpenAiEmbedder implements Embedder {
  readonly model: string;
  private readonly endpoint: string;

  constructor(private readonly options: OpenAiEmbedderOptions) {
    this.model = `openai:${options.model}`;
    // EMBEDDING_URL may name the base (…/v1) or the endpoint itself (…/v1/embeddings).
    this.endpoint = /\/embeddings\/?$/.test(options.url) ? options.url : `${options.url.replace(/\/+$/, '')}/embeddings`;
  }

  async embed(texts: string[]): Promise<number[][]> {
    if (texts.length === 0) return [];
    const response = await fetch(this.endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
      },
      body: JSON.stringify({ model: this.options.model, input: texts }),
      signal: AbortSignal.timeout(this.options.timeoutMs),
    });
    if (REFUSED.has(response.status)) throw new EmbeddingRefused(`embedding endpoint refused the texts (${response.status})`);
    if (!response.ok) throw new Error(`embedding endpoint answered ${response.status}`);
    const body: unknown = await response.json();
    if (!isResponse(body) || body.data.length !== texts.length) throw new Error('embedding endpoint returned an unexpected body');
    return [...body.data].sort((a, b) => a.index - b.index).map((d) => d.embedding);
  }
}
