import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createVerifier } from '../../src/auth/verifier.js';
import { resolveJwt } from '../../src/bootstrap.js';
import { mintToken } from '../../src/cli/token.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { keyPair } from '../helpers/keys.js';

const options = { tenant: 'acme', scope: 'registry:publish billing:read', subject: 'ci-bot', ttl: '15m' };

describe('mintToken', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'registry-token-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('mints HS256 tokens for JWT_SECRET that the service verifies', async () => {
    const config = loadConfig({ JWT_SECRET: 'x'.repeat(40), JWT_ISSUER: 'https://idp', JWT_AUDIENCE: 'registry' });
    const minted = await mintToken(config, options);
    expect(decodeProtectedHeader(minted)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const claims = decodeJwt(minted);
    expect(claims).toMatchObject({ iss: 'https://idp', aud: 'registry', sub: 'ci-bot', tenant_id: 'acme' });
    expect(claims.exp! - claims.iat!).toBe(900);
    expect(await createVerifier(config.jwt)(minted)).toEqual({ tenant: 'acme', subject: 'ci-bot', scopes: ['billing:read', 'registry:publish'] });
  });

  it('mints tokens for the development secret the server created', async () => {
    const config = loadConfig({ DATA_DIR: dataDir });
    const { jwt } = resolveJwt(config, true);
    const minted = await mintToken(config, options);
    expect((await createVerifier(jwt)(minted)).tenant).toBe('acme');
  });

  it('uses custom TENANT_CLAIM and SCOPE_CLAIM', async () => {
    const config = loadConfig({ JWT_SECRET: 'x'.repeat(40), TENANT_CLAIM: 'org', SCOPE_CLAIM: 'permissions' });
    const minted = await mintToken(config, options);
    expect(decodeJwt(minted)).toMatchObject({ org: 'acme', permissions: 'registry:publish billing:read' });
    expect(await createVerifier(config.jwt)(minted)).toMatchObject({ tenant: 'acme', scopes: ['billing:read', 'registry:publish'] });
  });

  it('refuses without a secret: asymmetric keys, or no development secret yet', async () => {
    const { publicPem } = await keyPair('RS256');
    await expect(mintToken(loadConfig({ JWT_PUBLIC_KEY: publicPem }), options)).rejects.toThrow(ConfigError);
    await expect(mintToken(loadConfig({ DATA_DIR: dataDir }), options)).rejects.toThrow(/start the service once first/);
  });
});
