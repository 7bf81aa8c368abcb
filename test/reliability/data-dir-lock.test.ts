import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { DataDirLockedError, LOCK_FILE, lockDataDir, processStart } from '../../src/db/data-dir-lock.js';
import { exited, freePort, ROOT, spawnServer, startServer } from '../helpers/server-process.js';

/** Runs the lock contender fixture; resolves with its output and exit code. */
function contend(dir: string, holdMs: number, crash = false): { child: ChildProcess; done: Promise<{ out: string; code: number | null; signal: string | null }> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/lock-contender.ts', dir, String(holdMs), ...(crash ? ['crash'] : [])], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return { child, done: exited(child).then(({ code, signal }) => ({ out: out.trim(), code, signal })) };
}

const lockOf = (dir: string) => JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as { pid: number; start: string | null; host: string; token: string };

/**
 * One process per embedded DATA_DIR (issue 13, finding 3), with real processes: a second server
 * refuses to start and says why, the lock goes away on exit, a lock left by SIGKILL is taken over,
 * a reused pid does not keep a dead owner's lock, and of several processes racing for a stale lock
 * exactly one wins.
 */
describe('DATA_DIR lock (real processes)', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'registry-lock-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a second server on the same DATA_DIR refuses to start with a clear message; the first keeps serving; exit releases', async () => {
    const port = await freePort();
    const first = await startServer(dir, port);
    try {
      const second = spawnServer({ DATA_DIR: dir }, await freePort());
      const { code } = await exited(second.child);
      expect(code).toBe(1);
      expect(second.stderr()).toContain(`error: DATA_DIR ${dir} is in use by another tool-registry process (pid ${first.pid} on host ${hostname()}`);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      first.kill('SIGTERM');
      expect((await exited(first)).code).toBe(0);
    }
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    const again = await startServer(dir, port);
    again.kill('SIGTERM');
    await exited(again);
  }, 120_000);

  it('takes over the lock a server killed with SIGKILL left behind', async () => {
    const port = await freePort();
    const killed = await startServer(dir, port);
    killed.kill('SIGKILL');
    await exited(killed);
    expect(lockOf(dir).pid).toBe(killed.pid);
    const next = await startServer(dir, port);
    try {
      expect(lockOf(dir).pid).toBe(next.pid);
      expect(readdirSync(dir).filter((f) => f.startsWith(`${LOCK_FILE}.`))).toEqual([]);
    } finally {
      next.kill('SIGTERM');
      await exited(next);
    }
  }, 120_000);

  it('of several processes racing for a stale lock, exactly one wins', async () => {
    const crashed = contend(dir, 0, true);
    expect((await crashed.done).signal).toBe('SIGKILL');
    for (let round = 0; round < 3; round += 1) {
      const racers = Array.from({ length: 4 }, () => contend(dir, 1_500));
      const results = await Promise.all(racers.map((r) => r.done));
      expect(results.filter((r) => r.out === 'acquired'), JSON.stringify(results)).toHaveLength(1);
      expect(results.filter((r) => r.out.startsWith('refused: DATA_DIR')), JSON.stringify(results)).toHaveLength(3);
      // Leave a stale lock again for the next round.
      expect((await contend(dir, 0, true).done).signal).toBe('SIGKILL');
    }
  }, 120_000);

  describe('owner checks (in this process)', () => {
    // Some other live process, to own locks in these cases.
    let sleeper: ChildProcess;
    beforeAll(() => {
      sleeper = spawn('sleep', ['600']);
    });
    afterAll(() => sleeper.kill('SIGKILL'));
    const write = (owner: Record<string, unknown>) =>
      writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ boot: null, since: 'then', token: 'old', host: hostname(), ...owner }));

    it('keeps a lock whose owner runs, and takes over one whose pid now belongs to another process', () => {
      write({ pid: sleeper.pid, start: processStart(sleeper.pid!) });
      expect(() => lockDataDir(dir)).toThrow(DataDirLockedError);
      write({ pid: sleeper.pid, start: '1' });
      const lock = lockDataDir(dir);
      expect(lockOf(dir).pid).toBe(process.pid);
      lock.release();
      expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    });

    it('refuses an owner on another host, telling the operator what to remove', () => {
      write({ pid: 1, start: null, host: 'elsewhere' });
      expect(() => lockDataDir(dir)).toThrow(`If that host no longer uses this folder, delete ${join(dir, LOCK_FILE)} and start again.`);
    });

    it('refuses a second open in the same process, and a corrupt lock counts as stale', () => {
      writeFileSync(join(dir, LOCK_FILE), 'not json');
      const lock = lockDataDir(dir);
      expect(() => lockDataDir(dir)).toThrow('already open in this process');
      lock.release();
    });
  });
});
