import { request as httpRequest } from 'node:http';
import { type AddressInfo, connect } from 'node:net';

import { beforeAll, describe, expect, it } from 'vitest';

import { fastifyOptions } from '../../src/app.js';
import { call, testConfig, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { expectCleanError } from './helpers.js';

/** A raw HTTP exchange with a listening app (inject does not enforce Node's header limits). */
function raw(port: number, headers: Record<string, string>, path = '/v1/tools'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET', headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Limits, headers and error hygiene through HTTP. */
forEachDatabase((db) => {
  const t = useApp(db);
  const limited = useApp(db, { RATE_LIMIT_DISCOVER_PER_MINUTE: '3' });

  describe('limits and headers', () => {
    let port = 0;
    beforeAll(async () => {
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      port = (t.app.server.address() as AddressInfo).port;
    });

    it('answers 413 in the error format for oversized bodies on every write and read route', async () => {
      const tk = await token({ scopes: [PUBLISH] });
      const big = 'x'.repeat(300 * 1024);
      for (const [method, url, body] of [
        ['POST', '/v1/tools', toolDocument({ 'x-pad': big })],
        ['PUT', '/v1/tools/issue_refund', toolDocument({ 'x-pad': big })],
        ['POST', '/v1/discover', { query: 'refund', pad: big }],
        ['POST', '/v1/authorize', { tool: 'issue_refund', arguments: { pad: big } }],
      ] as const) {
        const res = await call(t.app, method, url, { token: tk, body });
        expectCleanError(res, 413);
      }
    });

    it('answers 431 to oversized request headers and keeps serving', async () => {
      const tk = await token();
      // A raw socket: http.request may see the reset before the status line.
      const statusLine = await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(`GET /v1/tools HTTP/1.1\r\nHost: x\r\nX-Pad: ${'y'.repeat(17 * 1024)}\r\n\r\n`));
        socket.once('data', (data) => {
          resolve(data.toString().split('\r\n')[0]!);
          socket.destroy();
        });
        socket.once('error', reject);
      });
      expect(statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
      expect((await raw(port, { authorization: `Bearer ${tk}` })).status).toBe(200);
    });

    it('bounds how long a request may take to arrive (request timeout configured)', () => {
      const options = fastifyOptions(testConfig());
      expect(options.requestTimeout).toBeGreaterThan(0);
      expect(options.requestTimeout).toBeLessThanOrEqual(60_000);
      expect(options.bodyLimit).toBe(256 * 1024);
    });

    it('answers 429 with Retry-After once a principal spends its discover budget', async () => {
      const tk = await token({ tenant: uniqueTenant('rl') });
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 5; i += 1) {
        last = await call(limited.app, 'POST', '/v1/discover', { token: tk, body: { query: 'refund' } });
        statuses.push(last.statusCode);
      }
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      expectCleanError(last!, 429);
      expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
    });

    it('propagates a sane x-request-id and replaces hostile ones (huge, spaces, non-ASCII, markup)', async () => {
      const sane = await t.app.inject({ method: 'GET', url: '/v1/tools', headers: { 'x-request-id': 'gw-123.abc:1' } });
      expect(sane.headers['x-request-id']).toBe('gw-123.abc:1');
      expect(sane.json().error.request_id).toBe('gw-123.abc:1');
      for (const hostile of ['a'.repeat(5000), 'id with spaces', 'ïd', '<script>', "'; drop table tools; --"]) {
        const res = await t.app.inject({ method: 'GET', url: '/v1/tools', headers: { 'x-request-id': hostile } });
        expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
        expect(res.json().error.request_id).toBe(res.headers['x-request-id']);
      }
    });

    it('never puts a stack trace, SQL or a file path in any 4xx/5xx body', async () => {
      const tenant = uniqueTenant('errors');
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      expect((await call(t.app, 'POST', '/v1/tools', { token: publisher, body: toolDocument() })).statusCode).toBe(201);
      const reader = await token({ tenant });
      const requests: [string, string, { token?: string; body?: unknown; headers?: Record<string, string> }][] = [
        ['GET', '/v1/tools', {}],
        ['GET', '/v1/tools', { token: 'not.a.jwt' }],
        ['GET', '/v1/tools?limit=100000', { token: reader }],
        ['GET', '/v1/tools?cursor=%00%ff', { token: reader }],
        ['GET', '/v1/tools?cursor=Jyk7IGRyb3AgdGFibGUgdG9vbHM7LS0', { token: reader }],
        ['GET', '/v1/tools/..%2F..%2Fetc%2Fpasswd', { token: reader }],
        ['GET', `/v1/tools/${'a'.repeat(300)}`, { token: reader }],
        ['GET', '/v1/tools/no_such', { token: reader }],
        ['POST', '/v1/tools', { token: reader, body: toolDocument() }],
        ['POST', '/v1/tools', { token: publisher, body: toolDocument() }],
        ['PUT', '/v1/tools/issue_refund', { token: publisher, body: toolDocument(), headers: { 'if-match': '"nope"' } }],
        ['PUT', '/v1/tools/issue_refund', { token: publisher, body: toolDocument({ version: '0.0.1', description: 'Changed.' }) }],
        ['POST', '/v1/discover', { token: reader, body: { query: 'x', top_k: 1000 } }],
        ['POST', '/v1/discover', { token: reader, body: '{"query":', headers: { 'content-type': 'application/json' } }],
        ['POST', '/v1/authorize', { token: reader, body: { tool: 'issue_refund', arguments: [] } }],
        ['POST', '/v1/authorize', { token: reader, body: { tool: 'issue_refund', arguments: {}, discovery_id: 'not-a-uuid' } }],
        ['GET', '/v1/audit', { token: reader }],
        ['GET', '/v1/audit?before=-1', { token: publisher }],
        ['GET', '/v1/audit?before=99999999999999999999', { token: publisher }],
        ['GET', '/v1/discoveries?before=yesterday', { token: publisher }],
        ['DELETE', '/v1/tools/issue_refund/learned-aliases/99999999999999999999', { token: publisher }],
        ['GET', '/v1/nowhere', {}],
      ];
      for (const [method, url, options] of requests) {
        const res = await call(t.app, method as "GET", url, options);
        expect(res.statusCode, `${method} ${url}`).toBeGreaterThanOrEqual(400);
        expectCleanError(res);
      }
    });
  });
});
