import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { expect, it } from 'vitest';

import { forEachDatabase } from '../helpers/databases.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const python = (() => {
  try {
    execFileSync('python3', ['--version']);
    return true;
  } catch {
    return false;
  }
})();

/**
 * The Python client's own unittest suite (clients/python/tests), which starts a real registry
 * server: on the in-process leg with its embedded in-memory database, on the wire legs against
 * that leg's database (REGISTRY_TEST_DATABASE_URL, a migrated private schema or pglite-socket).
 */
forEachDatabase((db) => {
  const title = 'passes python3 -m unittest against a server it starts (standard library only)';
  it.skipIf(!python)(python ? title : `${title}: SKIPPED, python3 is not installed (apt-get install -y python3)`, async () => {
    const env = { ...process.env, NODE: process.execPath, ...(db.current.url ? { REGISTRY_TEST_DATABASE_URL: db.current.url } : {}) };
    // Nothing but the standard library: no site packages, no user site.
    const result = await run('python3', ['-I', '-m', 'unittest', 'discover', '-s', 'clients/python/tests', '-v'], { cwd: ROOT, env, timeout: 240_000 }).catch(
      (error: { stdout: string; stderr: string; code: number }) => error,
    );
    expect(result.stderr, result.stderr).toMatch(/\nOK\n?$/);
  }, 240_000);
});
