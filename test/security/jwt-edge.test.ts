import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { FastifyInstance } from 'fastify';
import { exportJWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { call, useApp } from '../helpers/app.js';
import { inProcessDatabase } from '../helpers/databases.js';
import { keyPair, serveJwks, type TestKeyPair } from '../helpers/keys.js';
import { TEST_SECRET, token } from '../helpers/tokens.js';

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

/** An HS256 JWT with any header and payload, signed by hand (jose refuses to sign some of these). */
function hs256(header: Record<string, unknown>, payload: unknown, secret: string | Buffer = TEST_SECRET): string {
  const input = `${b64(header)}.${b64(payload)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}
const claims = (extra: Record<string, unknown> = {}) => ({ tenant_id: 'acme', scope: 'registry:publish', sub: 'mallory', iat: now(), exp: now() + 600, ...extra });

/**
 * JWT edge cases through HTTP, beyond test/auth (which covers alg none, foreign keys, HS256 with the
 * PEM, issuer/audience and the query string): kid injection, crit, nested tokens, embedded keys and
 * key URLs in the header, and clock skew at the tolerance boundary.
 */
describe('on PGlite in-process (token checks never reach the database: one leg is enough)', () => {
  const db = inProcessDatabase();
  const t = useApp(db);

  describe('JWT edge cases (HS256)', () => {
    it('accepts a control token, so every refusal below is about the attack', async () => {
      expect((await call(t.app, 'GET', '/v1/tools', { token: hs256({ alg: 'HS256', typ: 'JWT' }, claims()) })).statusCode).toBe(200);
    });

    it('ignores kid entirely with a shared secret: path traversal or SQL in kid neither breaks nor selects a key', async () => {
      for (const kid of ['../../../../etc/passwd', "' or 1=1; drop table tools; --", '/dev/null', 'x'.repeat(5000)]) {
        expect((await call(t.app, 'GET', '/v1/tools', { token: hs256({ alg: 'HS256', kid }, claims()) })).statusCode).toBe(200);
        // Signed with "the contents of the file the kid names" (empty): refused.
        const res = await call(t.app, 'GET', '/v1/tools', { token: hs256({ alg: 'HS256', kid }, claims(), '') });
        expect(res.statusCode).toBe(401);
        expect(res.json().error.code).toBe('unauthorized');
      }
    });

    it('refuses an unknown critical header, and b64:false', async () => {
      for (const header of [
        { alg: 'HS256', crit: ['x-must-understand'], 'x-must-understand': true },
        { alg: 'HS256', crit: ['b64'], b64: false },
        { alg: 'HS256', crit: [] },
      ]) {
        const res = await call(t.app, 'GET', '/v1/tools', { token: hs256(header, claims()) });
        expect(res.statusCode, JSON.stringify(header)).toBe(401);
      }
    });

    it('refuses a nested token (cty: JWT) instead of trusting the inner one', async () => {
      const inner = await token({ tenant: 'acme', scopes: ['registry:publish'] });
      const res = await call(t.app, 'GET', '/v1/tools', { token: hs256({ alg: 'HS256', cty: 'JWT' }, inner) });
      expect(res.statusCode).toBe(401);
    });

    it('never fetches jku or x5u and never trusts an embedded jwk', async () => {
      let hits = 0;
      const server = createServer((_req, res) => {
        hits += 1;
        res.end('{}');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks.json`;
      try {
        const attacker = await keyPair('RS256');
        const jwk = await exportJWK(attacker.publicKey);
        for (const extra of [{ jku: url }, { x5u: url }, { jwk }]) {
          const forged = await token({ alg: 'RS256', key: attacker.privateKey, claims: {} });
          const [, payload, signature] = forged.split('.');
          const res = await call(t.app, 'GET', '/v1/tools', { token: `${b64({ alg: 'RS256', ...extra })}.${payload}.${signature}` });
          expect(res.statusCode).toBe(401);
        }
        expect(hits).toBe(0);
      } finally {
        server.close();
      }
    });

    it('refuses jku, x5u, jwk, x5c and cty headers even when the token is signed with the right key (issue 32, finding 12)', async () => {
      const url = 'http://127.0.0.1:9/jwks.json';
      const jwk = { kty: 'oct', k: Buffer.from(TEST_SECRET).toString('base64url') };
      for (const extra of [{ jku: url }, { x5u: url }, { jwk }, { x5c: ['MIIB'] }, { cty: 'json' }, { cty: 'JWT' }]) {
        const res = await call(t.app, 'GET', '/v1/tools', { token: hs256({ alg: 'HS256', ...extra }, claims()) });
        expect(res.statusCode, JSON.stringify(extra)).toBe(401);
        expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
        expect(res.json().error.message).toContain(`token header '${Object.keys(extra)[0]}' is not accepted`);
      }
    });

    it('applies the 30 s clock tolerance: exp and nbf inside it pass, beyond it fail', async () => {
      const within = [{ exp: now() - 10 }, { nbf: now() + 10 }];
      const beyond = [{ exp: now() - 120 }, { nbf: now() + 120 }, { iat: now() + 3600 * 24 * 365, exp: now() - 31 }];
      for (const extra of within) expect((await call(t.app, 'GET', '/v1/tools', { token: hs256({ alg: 'HS256' }, claims(extra)) })).statusCode).toBe(200);
      for (const extra of beyond) expect((await call(t.app, 'GET', '/v1/tools', { token: hs256({ alg: 'HS256' }, claims(extra)) })).statusCode).toBe(401);
    });

    it('refuses claims of the wrong type instead of coercing them', async () => {
      for (const extra of [{ tenant_id: ['acme'] }, { tenant_id: '' }, { tenant_id: { $ne: null } }, { exp: String(now() + 600) }, { exp: 1e308 * 10 }]) {
        const res = await call(t.app, 'GET', '/v1/tools', { token: hs256({ alg: 'HS256' }, claims(extra)) });
        expect(res.statusCode, JSON.stringify(extra)).toBe(401);
      }
    });

    it('ignores tokens in the query string, a cookie or a second Authorization scheme', async () => {
      const valid = await token({ tenant: 'acme' });
      for (const request of [
        { url: `/v1/tools?access_token=${valid}`, headers: {} },
        { url: '/v1/tools', headers: { cookie: `token=${valid}; access_token=${valid}` } },
        { url: '/v1/tools', headers: { authorization: `Basic ${valid}` } },
        { url: '/v1/tools', headers: { 'x-access-token': valid } },
      ]) {
        const res = await t.app.inject({ method: 'GET', ...request });
        expect(res.statusCode, request.url).toBe(401);
      }
    });
  });

  describe('JWT edge cases (JWKS_URL)', () => {
    let pair: TestKeyPair;
    let jwks: Awaited<ReturnType<typeof serveJwks>>;
    let app: FastifyInstance;
    beforeAll(async () => {
      const { buildTestApp } = await import('../helpers/app.js');
      pair = await keyPair('RS256');
      jwks = await serveJwks([{ pair, kid: 'k1' }]);
      app = await buildTestApp({ database: db.database, env: { JWKS_URL: jwks.url } });
    });
    afterAll(async () => {
      await app.close();
      await jwks.close();
    });

    it('treats an injected kid as an unknown key: 401, never a lookup outside the set', async () => {
      expect((await call(app, 'GET', '/v1/tools', { token: await token({ alg: 'RS256', key: pair.privateKey, kid: 'k1' }) })).statusCode).toBe(200);
      for (const kid of ['../../k1', "k1' or '1'='1", 'k1\u0000', 'http://127.0.0.1:1/evil']) {
        const res = await call(app, 'GET', '/v1/tools', { token: await token({ alg: 'RS256', key: pair.privateKey, kid }) });
        expect(res.statusCode, kid).toBe(401);
      }
    });
  });
});
