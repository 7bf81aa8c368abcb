import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { devSecret } from '../../src/auth/dev-secret.js';

describe('devSecret', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'registry-dev-secret-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the secret once in DATA_DIR (mode 0600) and reuses it', () => {
    const dataDir = join(dir, 'nested', 'data');
    const first = devSecret(dataDir, true);
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const file = join(dataDir, 'dev-jwt-secret');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(devSecret(dataDir, true)).toBe(first);
    expect(devSecret(dataDir, false)).toBe(first);
    expect(readFileSync(file, 'utf8')).toBe(`${first}\n`);
  });

  it('does not create a secret when asked not to', () => {
    expect(devSecret(join(dir, 'data'), false)).toBeUndefined();
  });

  it('keeps a secret written by another process', () => {
    writeFileSync(join(dir, 'dev-jwt-secret'), 'written-by-someone-else-0123456789abcdef\n');
    expect(devSecret(dir, true)).toBe('written-by-someone-else-0123456789abcdef');
  });

  it('gives memory:// a fresh secret each time, and none without create', () => {
    const a = devSecret('memory://', true);
    const b = devSecret('memory://', true);
    expect(a).toBeDefined();
    expect(a).not.toBe(b);
    expect(devSecret('memory://', false)).toBeUndefined();
  });
});
