import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const FILE = 'dev-jwt-secret';

/**
 * The development signing secret kept in DATA_DIR, created on first use (mode 0600). Only for the
 * embedded database with no key configured; `memory://` gets a fresh in-memory secret. `file`
 * names another development secret kept the same way (the gateway's header key).
 */
export function devSecret(dataDir: string, create: boolean, file: string = FILE): string | undefined {
  if (dataDir.startsWith('memory://')) return create ? randomBytes(32).toString('base64url') : undefined;
  const path = join(dataDir, file);
  try {
    return readFileSync(path, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !create) return undefined;
  }
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  // 'wx' so two processes racing on first start cannot overwrite each other's secret.
  try {
    writeFileSync(path, `${secret}\n`, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch {
    return readFileSync(path, 'utf8').trim();
  }
}
