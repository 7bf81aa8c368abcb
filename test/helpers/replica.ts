import './provided.js';

import { connect, createServer, type Server, type Socket } from 'node:net';

import pg from 'pg';
import { inject } from 'vitest';

/**
 * The real streaming replica of the PostgreSQL leg (TEST_DATABASE_READ_URL, from
 * scripts/postgres.sh --replica), or why tests that need one skip.
 */
export function streamingReplica(): { primaryUrl: string; readUrl: string; skip: undefined } | { skip: string } {
  const external = inject('externalPostgres');
  if (external.url === null) return { skip: `no PostgreSQL: ${external.source}` };
  if (external.readUrl === null) return { skip: `no streaming replica: ${external.source} gave no TEST_DATABASE_READ_URL` };
  return { primaryUrl: external.url, readUrl: external.readUrl, skip: undefined };
}

/** `base` with the connection options (the test file's private search_path) of `like`. */
export function withOptionsOf(base: string, like: string): string {
  const url = new URL(base);
  const options = new URL(like).searchParams.get('options');
  if (options !== null) url.searchParams.set('options', options);
  return url.toString();
}

/** Runs one statement on `url` with a short-lived client. */
export async function execute<T = Record<string, unknown>>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Polls `probe` until it returns true (or throws the last failure after `timeoutMs`). */
export async function eventually(probe: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await probe()) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A TCP proxy in front of a database: stopping it is the server (or the network to it) going
 * away, every open connection cut; starting it again on the same port is the server coming back.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  static to(url: string): TcpProxy {
    const parsed = new URL(url);
    return new TcpProxy({ host: parsed.hostname, port: Number(parsed.port) });
  }

  /** `url` with host and port replaced by the proxy's. */
  urlFor(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
