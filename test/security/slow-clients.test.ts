import { type AddressInfo, connect, type Socket } from 'node:net';

import { beforeAll, describe, expect, it } from 'vitest';

import { fastifyOptions } from '../../src/app.js';
import { testConfig, useApp } from '../helpers/app.js';
import { inProcessDatabase } from '../helpers/databases.js';
import { token } from '../helpers/tokens.js';

/** A raw TCP connection to the app; resolves once connected. */
function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

/** Milliseconds until the server ends the connection, and what it sent before. */
function untilClosed(socket: Socket): Promise<{ ms: number; received: string }> {
  const started = performance.now();
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', () => undefined);
  return new Promise((resolve) => socket.once('close', () => resolve({ ms: performance.now() - started, received })));
}

/**
 * Slow and greedy clients on real sockets (issue 13, finding 7): headers and bodies must arrive
 * within their timeouts, enforced within about a second, and one address cannot hold more than
 * its share of connections. Short timeouts here; the defaults are checked against docs/configuration.md.
 * Connection handling never reaches the database: one leg is enough.
 */
describe('on PGlite in-process (sockets only)', () => {
  const db = inProcessDatabase();
  const t = useApp(db, { REQUEST_TIMEOUT_MS: '3000', HEADERS_TIMEOUT_MS: '1500', MAX_CONNECTIONS_PER_CLIENT: '4' });

  describe('slow clients', () => {
    let port = 0;
    beforeAll(async () => {
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      port = (t.app.server.address() as AddressInfo).port;
    });

    it('defaults to what docs/configuration.md says: headers within 10 s, the whole request within 30 s, checked every second', () => {
      const options = fastifyOptions(testConfig());
      expect(options.requestTimeout).toBe(30_000);
      expect(options.http).toMatchObject({ headersTimeout: 10_000, connectionsCheckingInterval: 1_000 });
    });

    it('cuts a client whose headers never finish, on time', async () => {
      const socket = await open(port);
      const closed = untilClosed(socket);
      socket.write('GET /healthz HTTP/1.1\r\nHost: registry\r\nX-Slow: ');
      const { ms, received } = await closed;
      expect(received).toMatch(/^HTTP\/1\.1 408/);
      expect(ms).toBeGreaterThanOrEqual(1_400);
      expect(ms).toBeLessThan(3_000);
    }, 10_000);

    it('cuts a body that trickles in, on time', async () => {
      const socket = await open(port);
      const closed = untilClosed(socket);
      // A valid token, so the request is not refused before its body is read.
      const auth = `Authorization: Bearer ${await token()}\r\n`;
      socket.write(`POST /v1/discover HTTP/1.1\r\nHost: registry\r\n${auth}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{`);
      const drip = setInterval(() => socket.writable && socket.write(' '), 200);
      const { ms, received } = await closed;
      clearInterval(drip);
      expect(received).toMatch(/^HTTP\/1\.1 408/);
      expect(ms).toBeGreaterThanOrEqual(2_900);
      expect(ms).toBeLessThan(5_000);
    }, 10_000);

    it('caps the connections one address holds, and frees a slot when one closes', async () => {
      const held = await Promise.all([1, 2, 3, 4].map(() => open(port)));
      const extra = await open(port);
      const refused = await untilClosed(extra);
      expect(refused.ms).toBeLessThan(500);
      expect(refused.received).toBe('');
      expect(held.every((s) => !s.destroyed)).toBe(true);
      const gone = untilClosed(held[0]!);
      held[0]!.destroy();
      await gone;
      const next = await open(port);
      const answered = untilClosed(next);
      next.write('GET /healthz HTTP/1.1\r\nHost: registry\r\nConnection: close\r\n\r\n');
      expect((await answered).received).toMatch(/^HTTP\/1\.1 200/);
      for (const socket of held) socket.destroy();
    }, 10_000);
  });
});
