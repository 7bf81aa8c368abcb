import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { resolveJwt, serverVerifier } from '../src/bootstrap.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { token } from './helpers/tokens.js';

describe('resolveJwt', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'registry-bootstrap-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('refuses DATABASE_URL without any key', () => {
    expect(() => resolveJwt(loadConfig({ DATABASE_URL: 'postgres://db/registry', DATA_DIR: dataDir }), true)).toThrow(ConfigError);
    expect(() => resolveJwt(loadConfig({ DATABASE_URL: 'postgres://db/registry', DATA_DIR: dataDir }), true)).toThrow(/DATABASE_URL is set but no JWT key/);
  });

  it('uses the configured key, never development mode, when one is set', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://db/registry', JWT_SECRET: 's'.repeat(32), DATA_DIR: dataDir });
    expect(resolveJwt(config, true)).toEqual({ jwt: config.jwt, developmentMode: false });
  });

  it('runs the embedded database in development mode with a secret kept in DATA_DIR', () => {
    const first = resolveJwt(loadConfig({ DATA_DIR: dataDir }), true);
    expect(first.developmentMode).toBe(true);
    expect(first.jwt.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(resolveJwt(loadConfig({ DATA_DIR: dataDir }), false).jwt.secret).toBe(first.jwt.secret);
  });

  it('does not invent a secret when asked only to read one', () => {
    expect(() => resolveJwt(loadConfig({ DATA_DIR: dataDir }), false)).toThrow(/start the service once first/);
  });

  it('gives the server a verifier for the development secret and warns about it', async () => {
    const warnings: unknown[] = [];
    const verify = serverVerifier(loadConfig({ DATA_DIR: dataDir }), { warn: (...args: unknown[]) => void warnings.push(args) } as never);
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings[0])).toMatch(/DEVELOPMENT MODE/);
    const secret = resolveJwt(loadConfig({ DATA_DIR: dataDir }), false).jwt.secret!;
    expect((await verify(await token({ tenant: 'dev', key: new TextEncoder().encode(secret) }))).tenant).toBe('dev');
  });
});
