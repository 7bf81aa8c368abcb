import { describe, expect, it } from 'vitest';

import { call, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { token } from '../helpers/tokens.js';

/** The error format, request ids, health and docs endpoints through HTTP on every database leg. */
forEachDatabase((db) => {
  const t = useApp(db);

  describe('error format', () => {
    it('answers an unknown route with 404 in the error format, without authentication', async () => {
      const res = await call(t.app, 'GET', '/v1/nothing-here?x=1');
      expect(res.statusCode).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({ error: { code: 'not_found', message: 'no route GET /v1/nothing-here', details: [], request_id: res.headers['x-request-id'] } });
    });

    it('answers a non-JSON body with 415 in the error format', async () => {
      const res = await call(t.app, 'POST', '/v1/discover', { token: await token(), body: 'refund please', headers: { 'content-type': 'text/plain' } });
      expect(res.statusCode).toBe(415);
      expect(res.json().error.code).toBe('unsupported_media_type');
    });

    it('answers an unsupported method on a known path with 404 in the error format', async () => {
      const res = await call(t.app, 'PATCH', '/v1/tools/issue_refund', { token: await token() });
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    });
  });

  describe('x-request-id', () => {
    it('mints a request id and returns it in the header and in error bodies', async () => {
      const res = await call(t.app, 'GET', '/v1/tools');
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.json().error.request_id).toBe(res.headers['x-request-id']);
    });

    it('echoes a sane caller request id', async () => {
      const res = await call(t.app, 'GET', '/healthz', { headers: { 'x-request-id': 'trace-abc.123:XYZ_-' } });
      expect(res.headers['x-request-id']).toBe('trace-abc.123:XYZ_-');
    });

    it.each([
      ['a newline', 'abc\r\nSet-Cookie: x=1'],
      ['spaces and markup', '<script>alert(1)</script>'],
      ['an over-long value', 'a'.repeat(129)],
      ['an empty value', ''],
    ])('replaces a hostile request id (%s)', async (_label, hostile) => {
      const res = await t.app.inject({ method: 'GET', url: '/v1/tools', headers: { 'x-request-id': hostile } });
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.json().error.request_id).toBe(res.headers['x-request-id']);
      expect(res.headers['set-cookie']).toBeUndefined();
    });
  });

  describe('operations endpoints', () => {
    it('GET /healthz is ok', async () => {
      const res = await call(t.app, 'GET', '/healthz');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ status: 'ok' });
    });

    it('GET /readyz reports the database and migrations', async () => {
      const res = await call(t.app, 'GET', '/readyz');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ status: 'ready', checks: { database: 'ok', migrations: 'ok' } });
    });

    it('GET /docs serves the OpenAPI UI and /docs/json the document', async () => {
      const ui = await call(t.app, 'GET', '/docs');
      expect(ui.statusCode).toBe(200);
      expect(ui.headers['content-type']).toMatch(/^text\/html/);
      const json = await call(t.app, 'GET', '/docs/json');
      expect(json.statusCode).toBe(200);
      const document = json.json();
      expect(document.openapi).toBe('3.1.0');
      expect(Object.keys(document.paths)).toEqual(expect.arrayContaining(['/v1/tools', '/v1/tools/{name}', '/v1/tools/{name}/versions', '/healthz', '/readyz']));
      expect(document.paths['/v1/tools'].post.responses).toHaveProperty('201');
      expect(document.paths['/healthz'].get.security).toEqual([]);
    });
  });
});
