import { generateKeyPairSync } from 'node:crypto';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

import type { Principal } from '../../src/auth/principal.js';
import { algorithmsForKey, createVerifier, principalFromClaims, type TokenVerifier } from '../../src/auth/verifier.js';
import { AppError } from '../../src/errors.js';
import { testConfig, type TestEnv } from '../helpers/app.js';
import { keyPair, serveJwks, type TestKeyPair } from '../helpers/keys.js';
import { TEST_SECRET, token, unsignedToken } from '../helpers/tokens.js';

/** JWT verification in isolation: every attack case the HTTP layer relies on. Time is frozen. */

const NOW = Date.UTC(2026, 10, 30, 12, 0, 0);
const nowSeconds = Math.floor(NOW / 1000);

const verifierFor = (env: TestEnv = {}): TokenVerifier => createVerifier(testConfig(env).jwt);

async function rejection(promise: Promise<Principal>): Promise<AppError> {
  const error = await promise.then(
    () => {
      throw new Error('the token was accepted');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).statusCode).toBe(401);
  expect((error as AppError).code).toBe('unauthorized');
  return error as AppError;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(NOW);
});
afterEach(() => {
  vi.useRealTimers();
});

describe('HS256 (JWT_SECRET)', () => {
  const verify = verifierFor();

  it('accepts a valid token and returns tenant, subject and sorted scopes', async () => {
    expect(await verify(await token({ tenant: 'acme', sub: 'alice', scopes: ['b:read', 'a:write', 'b:read'] }))).toEqual({
      tenant: 'acme',
      subject: 'alice',
      scopes: ['a:write', 'b:read'],
    });
  });

  it('rejects alg none', async () => {
    const error = await rejection(verify(unsignedToken()));
    expect(error.headers['www-authenticate']).toBe('Bearer error="invalid_token"');
  });

  it('rejects a none-alg header carrying a valid HS256 signature', async () => {
    const valid = await token({ scopes: ['registry:publish'] });
    const [, payload, signature] = valid.split('.');
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    await rejection(verify(`${header}.${payload}.${signature}`));
  });

  it('rejects a token signed with another secret', async () => {
    const error = await rejection(verify(await token({ key: new TextEncoder().encode(`${TEST_SECRET}-other`) })));
    expect(error.message).toBe('token signature is invalid');
  });

  it('rejects HS384/HS512 even with the right secret (allow-list is HS256 only)', async () => {
    for (const alg of ['HS384', 'HS512']) {
      expect((await rejection(verify(await token({ alg })))).message).toBe('token algorithm is not allowed');
    }
  });

  it('rejects a tampered payload', async () => {
    const [header, , signature] = (await token({ tenant: 'acme' })).split('.');
    const forged = Buffer.from(JSON.stringify({ tenant_id: 'victim', exp: nowSeconds + 600 })).toString('base64url');
    await rejection(verify(`${header}.${forged}.${signature}`));
  });

  it.each(['', 'garbage', 'a.b.c', 'a.b', '....'])('rejects the malformed token %j', async (bad) => {
    await rejection(verify(bad));
  });

  it('rejects an expired token beyond the clock tolerance, and accepts one within it', async () => {
    expect((await rejection(verify(await token({ exp: nowSeconds - 31 })))).message).toBe('token expired');
    expect((await verify(await token({ exp: nowSeconds - 29 }))).tenant).toBe('acme');
  });

  it('stops accepting a remembered token once it expires, exactly when an unremembered one would', async () => {
    const strict = verifierFor({ JWT_CLOCK_TOLERANCE_SECONDS: '5' });
    const reused = await token({ exp: nowSeconds + 60 });
    expect((await strict(reused)).tenant).toBe('acme');
    vi.setSystemTime(NOW + 64_000);
    expect((await strict(reused)).tenant).toBe('acme');
    vi.setSystemTime(NOW + 65_000);
    expect((await rejection(strict(reused))).message).toBe('token expired');
    expect((await rejection(strict(reused))).message).toBe('token expired');
  });

  it('never answers one token with what another was verified as', async () => {
    const tokens = await Promise.all(['acme', 'globex', 'initech'].map((tenant) => token({ tenant, scopes: [`${tenant}:read`] })));
    for (let round = 0; round < 2; round += 1) {
      for (const [i, tenant] of ['acme', 'globex', 'initech'].entries()) {
        expect(await verify(tokens[i]!)).toEqual({ tenant, subject: 'user-1', scopes: [`${tenant}:read`] });
      }
    }
    // A remembered token with its signature altered is verified afresh, and refused.
    const tampered = `${tokens[0]!.slice(0, -2)}${tokens[0]!.endsWith('AA') ? 'BB' : 'AA'}`;
    await rejection(verify(tampered));
  });

  it('hands out remembered callers frozen, so one request cannot change what the next is', async () => {
    const reused = await token({ scopes: ['billing:read'] });
    const first = await verify(reused);
    const second = await verify(reused);
    expect(second).toBe(first);
    expect(Object.isFrozen(second) && Object.isFrozen(second.scopes)).toBe(true);
  });

  it('applies JWT_CLOCK_TOLERANCE_SECONDS', async () => {
    const strict = verifierFor({ JWT_CLOCK_TOLERANCE_SECONDS: '0' });
    await rejection(strict(await token({ exp: nowSeconds - 1 })));
  });

  it('rejects a token that is not yet valid (nbf beyond the tolerance)', async () => {
    expect((await rejection(verify(await token({ nbf: nowSeconds + 120 })))).message).toMatch(/claim 'nbf'/);
    expect((await verify(await token({ nbf: nowSeconds + 10 }))).tenant).toBe('acme');
  });

  it('rejects a token without exp', async () => {
    expect((await rejection(verify(await token({ exp: null })))).message).toMatch(/'exp'/);
  });

  it.each([
    ['missing', null],
    ['empty', ''],
    ['blank', '   '],
  ])('rejects a token whose tenant claim is %s', async (_label, tenant) => {
    expect((await rejection(verify(await token({ tenant })))).message).toBe("token has no 'tenant_id' claim naming the tenant");
  });

  it('rejects a tenant claim that is not a string', async () => {
    await rejection(verify(await token({ tenant: null, claims: { tenant_id: ['acme', 'other'] } })));
    await rejection(verify(await token({ tenant: null, claims: { tenant_id: 42 } })));
  });

  it('accepts any issuer and audience when none is configured', async () => {
    expect((await verify(await token({ iss: 'https://anyone', aud: 'anything' }))).tenant).toBe('acme');
  });
});

describe('issuer and audience', () => {
  const verify = verifierFor({ JWT_ISSUER: 'https://idp.example', JWT_AUDIENCE: 'tool-registry' });

  it('accepts the configured issuer and audience', async () => {
    expect((await verify(await token({ iss: 'https://idp.example', aud: ['other', 'tool-registry'] }))).tenant).toBe('acme');
  });

  it.each([
    ['a wrong issuer', { iss: 'https://evil.example', aud: 'tool-registry' }, /'iss'/],
    ['no issuer', { aud: 'tool-registry' }, /'iss'/],
    ['a wrong audience', { iss: 'https://idp.example', aud: 'other-service' }, /'aud'/],
    ['no audience', { iss: 'https://idp.example' }, /'aud'/],
  ])('rejects %s', async (_label, claims, message) => {
    expect((await rejection(verify(await token(claims)))).message).toMatch(message);
  });
});

describe('scopes and claim names', () => {
  it('reads a space-separated scope string, an scp array, or both', async () => {
    const verify = verifierFor();
    expect((await verify(await token({ scopes: ['a', 'b'] }))).scopes).toEqual(['a', 'b']);
    expect((await verify(await token({ scopes: ['a', 'b'], scopeClaim: 'scp', scopeAsArray: true }))).scopes).toEqual(['a', 'b']);
    expect((await verify(await token({ claims: { scope: '  x   y ', scp: ['z', 'x', 7] } }))).scopes).toEqual(['x', 'y', 'z']);
    expect((await verify(await token({}))).scopes).toEqual([]);
  });

  it('reads only the configured SCOPE_CLAIM and TENANT_CLAIM when set', async () => {
    const verify = verifierFor({ TENANT_CLAIM: 'org', SCOPE_CLAIM: 'permissions' });
    const principal = await verify(await token({ tenant: null, claims: { org: 'acme', tenant_id: 'ignored', scope: 'registry:publish', permissions: ['billing:read'] } }));
    expect(principal).toEqual({ tenant: 'acme', subject: 'user-1', scopes: ['billing:read'] });
    await rejection(verify(await token({ tenant: 'acme' })));
    expect((await verify(await token({ tenant: null, claims: { org: 'acme', permissions: 'a b' } }))).scopes).toEqual(['a', 'b']);
  });

  it('principalFromClaims ignores non-string scope entries', () => {
    expect(principalFromClaims({ tenant_id: 't', scp: ['a', 1, null, ''] }, 'tenant_id', 'scope').scopes).toEqual(['a']);
  });
});

describe.each(['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA'])('public key (JWT_PUBLIC_KEY, %s)', (alg) => {
  let pair: TestKeyPair;
  let other: TestKeyPair;
  let verify: TokenVerifier;
  beforeAll(async () => {
    pair = await keyPair(alg);
    other = await keyPair(alg);
    verify = verifierFor({ JWT_PUBLIC_KEY: pair.publicPem });
  });

  it('accepts a token signed by the matching private key', async () => {
    expect((await verify(await token({ alg, key: pair.privateKey, scopes: ['s'] }))).scopes).toEqual(['s']);
  });

  it('rejects a token signed by another key', async () => {
    await rejection(verify(await token({ alg, key: other.privateKey })));
  });

  it('rejects HS256 signed with the public key PEM as the secret (algorithm confusion)', async () => {
    const forged = await token({ alg: 'HS256', key: new TextEncoder().encode(pair.publicPem) });
    expect((await rejection(verify(forged))).message).toBe('token algorithm is not allowed');
  });

  it('rejects HS256 signed with the test secret', async () => {
    await rejection(verify(await token()));
  });

  it('rejects alg none', async () => {
    await rejection(verify(unsignedToken()));
  });
});

describe('algorithmsForKey', () => {
  it('derives the allow-list from the key, never HS*', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey;
    expect(algorithmsForKey(rsa)).toEqual(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']);
    const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    expect(algorithmsForKey(p256)).toEqual(['ES256']);
    const p521 = generateKeyPairSync('ec', { namedCurve: 'P-521' }).publicKey;
    expect(algorithmsForKey(p521)).toEqual(['ES512']);
  });

  it('refuses unsupported key types and curves', () => {
    const secp256k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey;
    expect(() => algorithmsForKey(secp256k1)).toThrow(/unsupported JWT_PUBLIC_KEY curve/);
    const x25519 = generateKeyPairSync('x25519').publicKey;
    expect(() => algorithmsForKey(x25519)).toThrow(/unsupported JWT_PUBLIC_KEY type/);
  });

  it('accepts a PEM with literal \\n escapes, as env files carry it', async () => {
    const pair = await keyPair('RS256');
    const verify = verifierFor({ JWT_PUBLIC_KEY: pair.publicPem.trim().replace(/\n/g, '\\n') });
    expect((await verify(await token({ alg: 'RS256', key: pair.privateKey }))).tenant).toBe('acme');
  });
});

describe('JWKS (JWKS_URL)', () => {
  let rsa: TestKeyPair;
  let ec: TestKeyPair;
  let jwks: Awaited<ReturnType<typeof serveJwks>>;
  let verify: TokenVerifier;
  beforeAll(async () => {
    rsa = await keyPair('RS256');
    ec = await keyPair('ES256');
    jwks = await serveJwks([
      { pair: rsa, kid: 'rsa-1' },
      { pair: ec, kid: 'ec-1' },
    ]);
    verify = verifierFor({ JWKS_URL: jwks.url });
  });
  afterAll(async () => jwks.close());

  it('verifies tokens from every key of the set, fetching the set once', async () => {
    expect((await verify(await token({ alg: 'RS256', key: rsa.privateKey, kid: 'rsa-1' }))).tenant).toBe('acme');
    expect((await verify(await token({ alg: 'ES256', key: ec.privateKey, kid: 'ec-1' }))).tenant).toBe('acme');
    expect(jwks.fetches()).toBe(1);
  });

  it('rejects an unknown kid, a foreign key, HS256 and alg none', async () => {
    const stranger = await keyPair('RS256');
    await rejection(verify(await token({ alg: 'RS256', key: stranger.privateKey, kid: 'rsa-1' })));
    await rejection(verify(await token({ alg: 'RS256', key: stranger.privateKey, kid: 'unknown' })));
    await rejection(verify(await token({ kid: 'rsa-1' })));
    await rejection(verify(unsignedToken()));
  });
});
