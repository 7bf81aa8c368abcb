import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { openPglite } from '../../src/db/client.js';
import { DataDirError, resolveDataDir } from '../../src/db/data-dir.js';
import { DataDirLockedError, LOCK_FILE } from '../../src/db/data-dir-lock.js';
import { exited, failedStart, freePort, startServer } from '../helpers/server-process.js';

/**
 * Issue 32, finding 4: `DATA_DIR=file://<live folder>` started a second server on the same
 * embedded database (the lock landed in `./file:/<dir>/registry.lock`, PGlite opened `<dir>`), and
 * acknowledged writes were lost after a restart. Every spelling of one folder now meets at one lock.
 */
describe('DATA_DIR spellings of one folder share one lock', () => {
  let base: string;
  let dir: string;
  beforeEach(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'registry-spelling-')));
    dir = join(base, 'data');
    mkdirSync(dir);
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  it('resolves a path, a file: URL, a relative path and a symlink to the same real folder', () => {
    const link = join(base, 'link');
    symlinkSync(dir, link);
    const spellings = [dir, `${dir}/`, pathToFileURL(dir).href, `file://${dir}`, relative(process.cwd(), dir), link, pathToFileURL(link).href];
    for (const spelling of spellings) expect(resolveDataDir(spelling), spelling).toEqual({ kind: 'folder', path: dir });
    expect(resolveDataDir('memory://')).toEqual({ kind: 'memory' });
  });

  it('refuses spellings it cannot resolve, naming DATA_DIR', () => {
    const file = join(base, 'plain-file');
    writeFileSync(file, 'x');
    for (const spelling of ['file://relative/data', 'idb://registry', 'opfs-ahp://registry', 's3://bucket/data', join(file, 'data')]) {
      expect(() => resolveDataDir(spelling), spelling).toThrow(DataDirError);
      expect(() => resolveDataDir(spelling), spelling).toThrow(/^DATA_DIR /);
    }
    // Nothing was created for a refused spelling (the old lock landed in ./file:/...).
    expect(existsSync(join(process.cwd(), 'file:'))).toBe(false);
  });

  it('refuses a second open of the folder in this process whatever the spelling', async () => {
    const first = await openPglite(pathToFileURL(dir).href);
    try {
      expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
      await expect(openPglite(dir)).rejects.toThrow(DataDirLockedError);
      await expect(openPglite(join(relative(process.cwd(), base), 'data'))).rejects.toThrow(DataDirLockedError);
    } finally {
      await first.close();
    }
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  }, 60_000);

  it('replay: a server on DATA_DIR=<dir>, then one on DATA_DIR=file://<dir>: the second refuses to start', async () => {
    const port = await freePort();
    const first = await startServer(dir, port);
    try {
      const second = await failedStart({ DATA_DIR: `file://${dir}` });
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(`DATA_DIR ${dir} is in use by another tool-registry process (pid ${first.pid}`);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
      const odd = await failedStart({ DATA_DIR: 'file://not-a-host/data' });
      expect(odd.code).toBe(1);
      expect(odd.stderr).toContain('DATA_DIR file://not-a-host/data is not a usable file: URL');
    } finally {
      first.kill('SIGTERM');
      expect((await exited(first)).code).toBe(0);
    }
  }, 180_000);
});
