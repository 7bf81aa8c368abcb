import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback OpenAI-compatible `/v1/embeddings` endpoint with a deterministic bag-of-words
 * embedder (512-d, like the local model): it lets the benchmark index 100,000 tools in minutes
 * and keeps embedding cost out of the numbers it does not belong to. It counts the texts it
 * embedded, so the benchmark knows when the catalog is fully indexed.
 */
export class FakeEmbeddingServer {
  embedded = 0;
  private server: Server | undefined;

  static readonly DIMS = 512;

  static vector(text: string): number[] {
    const vector = new Array<number>(FakeEmbeddingServer.DIMS).fill(0);
    for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
      const digest = createHash('sha1').update(word.replace(/s$/, '')).digest();
      vector[digest.readUInt16BE(0) % FakeEmbeddingServer.DIMS]! += digest[2]! % 2 === 0 ? 1 : -1;
      vector[digest.readUInt16BE(3) % FakeEmbeddingServer.DIMS]! += 0.5;
    }
    const norm = Math.hypot(...vector) || 1;
    return vector.map((x) => x / norm);
  }

  /** Listens on 127.0.0.1 (random port); returns the base URL. */
  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { input: string[] | string };
        const inputs = Array.isArray(body.input) ? body.input : [body.input];
        this.embedded += inputs.length;
        const data = inputs.map((text, index) => ({ object: 'embedding', index, embedding: FakeEmbeddingServer.vector(text) }));
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ object: 'list', data, model: 'bench-hash-512' }));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
