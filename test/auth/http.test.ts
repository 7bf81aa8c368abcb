import { beforeAll, describe, expect, it } from 'vitest';

import { call, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { keyPair, type TestKeyPair } from '../helpers/keys.js';
import { PUBLISH, token, uniqueTenant, unsignedToken } from '../helpers/tokens.js';

/** Authentication through HTTP on every database leg: the hook, the 401 format, tenant isolation. */

// Generated before the apps that need them are built (top-level await: one key for all legs).
const rsa: TestKeyPair = await keyPair('RS256');

forEachDatabase((db) => {
  const t = useApp(db);
  const custom = useApp(db, { TENANT_CLAIM: 'org', SCOPE_CLAIM: 'permissions' });
  const pem = useApp(db, { JWT_PUBLIC_KEY: rsa.publicPem, JWT_ISSUER: 'https://idp.example', JWT_AUDIENCE: 'tool-registry' });

  const expect401 = (res: { statusCode: number; json: () => unknown; headers: Record<string, unknown> }) => {
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: { code: 'unauthorized', message: expect.any(String), details: [], request_id: expect.any(String) } });
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
  };

  describe('authentication hook', () => {
    it('is 401 without an Authorization header, on every /v1 route', async () => {
      for (const [method, url] of [
        ['GET', '/v1/tools'],
        ['GET', '/v1/tools/issue_refund'],
        ['GET', '/v1/tools/issue_refund/versions'],
        ['POST', '/v1/tools'],
        ['PUT', '/v1/tools/issue_refund'],
        ['DELETE', '/v1/tools/issue_refund'],
      ] as const) {
        const res = await call(t.app, method, url, { body: method === 'POST' || method === 'PUT' ? toolDocument() : undefined });
        expect401(res);
        expect(res.json().error.message).toBe('missing Authorization: Bearer token');
      }
    });

    it('ignores a token in the query string', async () => {
      const valid = await token({ scopes: [PUBLISH] });
      for (const param of ['access_token', 'token', 'jwt']) {
        expect401(await call(t.app, 'GET', `/v1/tools?${param}=${valid}`));
      }
    });

    it('is 401 for other schemes and malformed headers', async () => {
      const valid = await token();
      for (const authorization of [`Basic ${Buffer.from('a:b').toString('base64')}`, `Bearer`, `Bearer ${valid} extra`, `Token ${valid}`, valid]) {
        expect401(await call(t.app, 'GET', '/v1/tools', { headers: { authorization } }));
      }
    });

    it('accepts the scheme case-insensitively', async () => {
      const res = await call(t.app, 'GET', '/v1/tools', { headers: { authorization: `bearer ${await token()}` } });
      expect(res.statusCode).toBe(200);
    });

    it('is 401 for alg none, a wrong key, an expired token and a missing tenant', async () => {
      for (const bad of [
        unsignedToken(),
        await token({ key: new TextEncoder().encode('another-secret-another-secret-0123456789') }),
        await token({ exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 }),
        await token({ tenant: null, scopes: [PUBLISH] }),
      ]) {
        const res = await call(t.app, 'POST', '/v1/tools', { token: bad, body: toolDocument() });
        expect401(res);
        expect(res.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
      }
    });

    it('lets any valid token of a tenant read, with no scope at all', async () => {
      const res = await call(t.app, 'GET', '/v1/tools', { token: await token({ tenant: uniqueTenant() }) });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ tools: [], next_cursor: null });
    });

    it('leaves /healthz and /readyz open', async () => {
      expect((await call(t.app, 'GET', '/healthz')).statusCode).toBe(200);
      expect((await call(t.app, 'GET', '/readyz')).statusCode).toBe(200);
    });
  });

  describe('tenant isolation', () => {
    it("keeps each tenant's catalog to itself", async () => {
      const [a, b] = [uniqueTenant('a'), uniqueTenant('b')];
      const publishIn = async (tenant: string, name: string) =>
        (await call(t.app, 'POST', '/v1/tools', { token: await token({ tenant, scopes: [PUBLISH] }), body: toolDocument({ name }) })).statusCode;
      expect(await publishIn(a, 'shared_name')).toBe(201);
      expect(await publishIn(a, 'only_in_a')).toBe(201);
      expect(await publishIn(b, 'shared_name')).toBe(201);
      const names = async (tenant: string) =>
        (await call(t.app, 'GET', '/v1/tools', { token: await token({ tenant, scopes: [PUBLISH] }) })).json().tools.map((c: { name: string }) => c.name);
      expect(await names(a)).toEqual(['only_in_a', 'shared_name']);
      expect(await names(b)).toEqual(['shared_name']);
      expect((await call(t.app, 'GET', '/v1/tools/only_in_a', { token: await token({ tenant: b, scopes: [PUBLISH] }) })).statusCode).toBe(404);
    });

    it('treats tenant names as exact strings (no case folding, no trimming tricks)', async () => {
      const tenant = uniqueTenant('Case');
      expect((await call(t.app, 'POST', '/v1/tools', { token: await token({ tenant, scopes: [PUBLISH] }), body: toolDocument() })).statusCode).toBe(201);
      for (const variant of [tenant.toLowerCase(), `${tenant} `, `${tenant}%`]) {
        expect((await call(t.app, 'GET', '/v1/tools/issue_refund', { token: await token({ tenant: variant, scopes: [PUBLISH] }) })).statusCode).toBe(404);
      }
    });
  });

  describe('custom TENANT_CLAIM and SCOPE_CLAIM', () => {
    it('reads the tenant and scopes from the configured claims only', async () => {
      const tenant = uniqueTenant();
      const ok = await call(custom.app, 'POST', '/v1/tools', {
        token: await token({ tenant: null, claims: { org: tenant, permissions: [PUBLISH] } }),
        body: toolDocument(),
      });
      expect(ok.statusCode).toBe(201);
      const viaDefaultClaims = await call(custom.app, 'POST', '/v1/tools', { token: await token({ tenant, scopes: [PUBLISH] }), body: toolDocument({ name: 'other' }) });
      expect(viaDefaultClaims.statusCode).toBe(401);
      const noPermissions = await call(custom.app, 'POST', '/v1/tools', {
        token: await token({ tenant: null, claims: { org: tenant, scope: PUBLISH } }),
        body: toolDocument({ name: 'other' }),
      });
      expect(noPermissions.statusCode).toBe(403);
    });
  });

  describe('JWT_PUBLIC_KEY with issuer and audience', () => {
    let forged: string;
    beforeAll(async () => {
      forged = await token({ alg: 'HS256', key: new TextEncoder().encode(rsa.publicPem), scopes: [PUBLISH], iss: 'https://idp.example', aud: 'tool-registry' });
    });

    it('accepts RS256 tokens from the identity provider', async () => {
      const res = await call(pem.app, 'POST', '/v1/tools', {
        token: await token({ alg: 'RS256', key: rsa.privateKey, tenant: uniqueTenant(), scopes: [PUBLISH], iss: 'https://idp.example', aud: 'tool-registry' }),
        body: toolDocument(),
      });
      expect(res.statusCode).toBe(201);
    });

    it('rejects HS256 signed with the public key (algorithm confusion)', async () => {
      expect401(await call(pem.app, 'POST', '/v1/tools', { token: forged, body: toolDocument() }));
    });

    it('rejects a wrong issuer or audience', async () => {
      for (const claims of [
        { iss: 'https://evil.example', aud: 'tool-registry' },
        { iss: 'https://idp.example', aud: 'another-api' },
      ]) {
        expect401(await call(pem.app, 'GET', '/v1/tools', { token: await token({ alg: 'RS256', key: rsa.privateKey, ...claims }) }));
      }
    });
  });
});
