import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import { parseRetryAfter, RegistryClient, RegistryError, VERSION } from '../../clients/typescript/src/index.js';

type Handler = (request: IncomingMessage, response: ServerResponse, attempt: number) => void;

/** A local HTTP server answering with `handler`; counts requests. */
async function serve(handler: Handler): Promise<{ url: string; attempts: () => number; server: Server }> {
  let attempts = 0;
  const server = createServer((request, response) => {
    attempts += 1;
    handler(request, response, attempts);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, attempts: () => attempts, server };
}

const unavailable = (response: ServerResponse, retryAfter?: string) =>
  response
    .writeHead(503, { 'content-type': 'application/json', ...(retryAfter ? { 'retry-after': retryAfter } : {}), 'x-request-id': 'req-503' })
    .end(JSON.stringify({ error: { code: 'unavailable', message: 'the database is unavailable, retry shortly', details: [], request_id: 'req-503' } }));

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
});

/** Records the delays the client asked for instead of sleeping. */
function fakeSleep(): { sleep: (ms: number) => Promise<void>; delays: number[] } {
  const delays: number[] = [];
  return { delays, sleep: async (ms) => void delays.push(ms) };
}

describe('RegistryClient retries', () => {
  it('retries a 503 twice and succeeds, honouring Retry-After over the shorter backoff', async () => {
    const { url, attempts, server } = await serve((_request, response, attempt) => {
      if (attempt <= 2) unavailable(response, attempt === 1 ? '1' : undefined);
      else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tools: [], next_cursor: null }));
    });
    servers.push(server);
    const clock = fakeSleep();
    const client = new RegistryClient({ baseUrl: url, token: 't', sleep: clock.sleep, retry: { baseDelayMs: 100, jitter: false } });
    await expect(client.listTools()).resolves.toEqual({ tools: [], next_cursor: null });
    expect(attempts()).toBe(3);
    // Retry-After: 1 beats the first backoff (100 ms); the second uses the doubled backoff (200 ms).
    expect(clock.delays).toEqual([1000, 200]);
  });

  it('waits for real between attempts (a short Retry-After)', async () => {
    const { url, attempts, server } = await serve((_request, response, attempt) => {
      if (attempt <= 2) unavailable(response, '0.05');
      else response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    });
    servers.push(server);
    const started = performance.now();
    await expect(new RegistryClient({ baseUrl: url, retry: { baseDelayMs: 1, jitter: false } }).health()).resolves.toEqual({ status: 'ok' });
    expect(attempts()).toBe(3);
    expect(performance.now() - started).toBeGreaterThanOrEqual(90);
  });

  it('gives up after the configured retries with a typed 503 error', async () => {
    const { url, attempts, server } = await serve((_request, response) => unavailable(response, '30'));
    servers.push(server);
    const clock = fakeSleep();
    const client = new RegistryClient({ baseUrl: url, sleep: clock.sleep, retry: { retries: 2, maxDelayMs: 5000 } });
    const error = await client.discover('anything').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RegistryError);
    expect(error).toMatchObject({ status: 503, code: 'unavailable', request_id: 'req-503', retryAfterMs: 30_000, transient: true });
    expect(attempts()).toBe(3);
    expect(clock.delays).toEqual([5000, 5000]); // Retry-After capped by maxDelayMs
  });

  it('retries 408, 429 and 5xx, honouring Retry-After on a 429', async () => {
    const statuses = [408, 429, 500, 502, 504];
    const { url, attempts, server } = await serve((_request, response, attempt) => {
      const status = statuses[attempt - 1];
      if (status === undefined) return void response.writeHead(200, { 'content-type': 'application/json' }).end('{"tools":[],"next_cursor":null}');
      response.writeHead(status, { 'content-type': 'application/json', ...(status === 429 ? { 'retry-after': '2' } : {}) }).end(JSON.stringify({ error: { code: 'x', message: 'm', details: [], request_id: 'r' } }));
    });
    servers.push(server);
    const clock = fakeSleep();
    const client = new RegistryClient({ baseUrl: url, sleep: clock.sleep, retry: { retries: 5, baseDelayMs: 10, jitter: false } });
    await expect(client.listTools()).resolves.toEqual({ tools: [], next_cursor: null });
    expect(attempts()).toBe(6);
    expect(clock.delays).toEqual([10, 2000, 40, 80, 160]);
  });

  it('does not retry client errors', async () => {
    const { url, attempts, server } = await serve((_request, response) =>
      response.writeHead(409, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'conflict', message: 'exists', details: [], request_id: 'r' } })),
    );
    servers.push(server);
    await expect(new RegistryClient({ baseUrl: url, sleep: fakeSleep().sleep }).listTools()).rejects.toMatchObject({ status: 409, code: 'conflict', transient: false });
    expect(attempts()).toBe(1);
  });

  it('sends a user agent, and takes the base URL and token from REGISTRY_URL and REGISTRY_TOKEN', async () => {
    let seen: { ua?: string; auth?: string } = {};
    const { url, server } = await serve((request, response) => {
      seen = { ua: request.headers['user-agent'], auth: request.headers.authorization };
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    });
    servers.push(server);
    const saved = { url: process.env.REGISTRY_URL, token: process.env.REGISTRY_TOKEN };
    process.env.REGISTRY_URL = url;
    process.env.REGISTRY_TOKEN = 'env-token';
    try {
      const client = new RegistryClient({ userAgent: 'my-gateway/2.1' });
      expect(client.baseUrl).toBe(url);
      await client.health();
      expect(seen.auth).toBe('Bearer env-token');
      expect(seen.ua).toBe(`my-gateway/2.1 tool-registry-client/${VERSION} node/${process.versions.node}`);
    } finally {
      for (const [key, value] of [['REGISTRY_URL', saved.url], ['REGISTRY_TOKEN', saved.token]] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });

  it('retries network errors, then reports network_error with status 0', async () => {
    const { url, server } = await serve(() => undefined);
    await new Promise((resolve) => server.close(resolve));
    const clock = fakeSleep();
    const error = await new RegistryClient({ baseUrl: url, sleep: clock.sleep, retry: { retries: 2, jitter: false, baseDelayMs: 10 } }).listTools().catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 0, code: 'network_error' });
    expect((error as RegistryError).message).toMatch(/ECONNREFUSED/);
    expect(clock.delays).toEqual([10, 20]);
  });

  it('times out a hanging request', async () => {
    const { url, server } = await serve(() => undefined); // never answers
    servers.push(server);
    const client = new RegistryClient({ baseUrl: url, timeoutMs: 100, retry: { retries: 0 } });
    await expect(client.listTools()).rejects.toMatchObject({ status: 0, code: 'timeout' });
    server.closeAllConnections();
  });

  it('uses an injected fetch and sends the bearer token and JSON body', async () => {
    const seen: { url: string; init: RequestInit }[] = [];
    const client = new RegistryClient({
      baseUrl: 'http://registry.test/',
      token: 'jwt-1',
      fetch: async (url, init) => {
        seen.push({ url, init });
        return new Response(JSON.stringify({ decision: 'allow', reasons: [], tool: { name: 'x', version: '1.0.0' } }), { status: 200 });
      },
    });
    await client.authorize({ tool: 'x', arguments: { a: 1 } });
    expect(seen[0]?.url).toBe('http://registry.test/v1/authorize');
    expect(seen[0]?.init.headers).toMatchObject({ authorization: 'Bearer jwt-1', 'content-type': 'application/json' });
    expect(JSON.parse(String(seen[0]?.init.body))).toEqual({ tool: 'x', arguments: { a: 1 } });
  });
});

describe('parseRetryAfter', () => {
  it('reads delta seconds and HTTP dates', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', Date.parse('2026-01-01T00:00:00Z'))).toBe(10_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});
