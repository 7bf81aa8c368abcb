import { randomBytes } from 'node:crypto';
import { linkSync, readdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * An exclusive lock on an embedded DATA_DIR: PGlite is one process's database, and a second
 * process on the same folder (a second `serve`, a `migrate` while serving) splits it in two and
 * loses acknowledged writes. The lock is a file in the folder naming its owner (pid, process start
 * time, boot id, host, a random token), created atomically (link of a complete file: EEXIST if
 * held); it is removed on close and on exit. After a crash (SIGKILL, power loss) the file stays;
 * a later process takes it over when the owner is provably gone, through a takeover marker whose
 * creation (again atomic) only one contender wins. Refuses rather than guesses: an owner on
 * another host, or one whose liveness cannot be told, keeps the lock until an operator removes it.
 */

export const LOCK_FILE = 'registry.lock';

/** Who holds a lock (the file's JSON content). */
interface LockOwner {
  pid: number;
  /** Process start time in clock ticks since boot (/proc/<pid>/stat), so a reused pid is told apart. */
  start: string | null;
  boot: string | null;
  host: string;
  token: string;
  since: string;
}

/** A held lock: release it when the database closes (exit releases it too). */
export interface DataDirLock {
  readonly path: string;
  release(): void;
}

/** Thrown when another live process holds the folder. */
export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
}

const readText = (path: string): string | null => {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
};

/** Start time of a process (field 22 of /proc/<pid>/stat, after the parenthesized name), or null off Linux. */
export function processStart(pid: number): string | null {
  const stat = readText(`/proc/${pid}/stat`);
  return stat === null ? null : (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null);
}

const bootId = (): string | null => readText('/proc/sys/kernel/random/boot_id');

/** Folders this process holds (a second open in the same process is as unsafe as another process). */
const held = new Map<string, string>();

function me(): LockOwner {
  return { pid: process.pid, start: processStart(process.pid), boot: bootId(), host: hostname(), token: randomBytes(12).toString('hex'), since: new Date().toISOString() };
}

/** Creates `path` holding `owner` only if it does not exist; false when it does. */
function createExclusive(path: string, owner: LockOwner): boolean {
  const tmp = `${path}.tmp-${owner.token}-${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, JSON.stringify(owner), { mode: 0o600 });
  try {
    linkSync(tmp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    unlinkSync(tmp);
  }
}

/** The owner recorded in a lock or marker file; undefined when absent; null when unreadable (no live owner writes one). */
function ownerOf(path: string): LockOwner | null | undefined {
  const text = readText(path);
  if (text === null) return undefined;
  try {
    const owner = JSON.parse(text) as LockOwner;
    return typeof owner.pid === 'number' && typeof owner.token === 'string' && typeof owner.host === 'string' ? owner : null;
  } catch {
    return null;
  }
}

/**
 * Whether the owner's process still runs: 'dead' only when provably gone (no such pid, another
 * start time under that pid, another boot of this machine, or this very pid when this process
 * holds nothing there, as after a container restart), 'unknown' for another host.
 */
function liveness(owner: LockOwner, dir: string): 'alive' | 'dead' | 'unknown' {
  if (owner.host !== hostname()) return 'unknown';
  const boot = bootId();
  if (owner.boot !== null && boot !== null && owner.boot !== boot) return 'dead';
  if (owner.pid === process.pid) return held.get(dir) === owner.token ? 'alive' : 'dead';
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return 'dead';
  }
  const start = processStart(owner.pid);
  return owner.start !== null && start !== null && start !== owner.start ? 'dead' : 'alive';
}

function refusal(dir: string, path: string, owner: LockOwner | null, state: string): DataDirLockedError {
  const who = owner ? `pid ${owner.pid} on host ${owner.host}, since ${owner.since}` : 'an unknown process';
  const hint =
    state === 'unknown'
      ? `If that host no longer uses this folder, delete ${path} and start again.`
      : 'Stop it first, or run several replicas on PostgreSQL (DATABASE_URL) instead.';
  return new DataDirLockedError(`DATA_DIR ${dir} is in use by another tool-registry process (${who}); two processes on one embedded database lose writes. ${hint}`);
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Replaces the stale lock of `stale` (dead) with `owner`'s, unless another contender does:
 * contenders race to create the marker `registry.lock.takeover-<stale token>-<n>` (n counts
 * contenders that died mid-takeover); the one that creates it checks the lock still names the
 * stale owner and swaps it by rename. Returns true when `owner` now holds the lock.
 */
function takeOver(dir: string, path: string, stale: LockOwner | null, staleText: string, owner: LockOwner): boolean {
  const prefix = `${LOCK_FILE}.takeover-${stale?.token ?? 'unreadable'}-`;
  for (let n = 0; ; n += 1) {
    const marker = join(dir, `${prefix}${n}`);
    if (!createExclusive(marker, owner)) {
      const taker = ownerOf(marker);
      if (taker && liveness(taker, dir) !== 'dead') return false; // another live contender is taking over
      continue;
    }
    try {
      if (readText(path) !== staleText) return false; // taken over (or released) meanwhile: start again
      const tmp = `${path}.tmp-${owner.token}`;
      writeFileSync(tmp, JSON.stringify(owner), { mode: 0o600 });
      renameSync(tmp, path);
      return true;
    } finally {
      // The markers only (`<prefix><n>`): another contender's file on its way to becoming one
      // (`<prefix><n>.tmp-…`) is its own, and removing it failed that contender with ENOENT. A
      // contender that created a later marker after this one was gone may be clearing them too.
      for (const file of readdirSync(dir)) if (file.startsWith(prefix) && /^\d+$/.test(file.slice(prefix.length))) rmSync(join(dir, file), { force: true });
    }
  }
}

/** Takes the folder's lock or throws DataDirLockedError naming the owner. */
export function lockDataDir(dataDir: string): DataDirLock {
  const dir = resolve(dataDir);
  const path = join(dir, LOCK_FILE);
  const owner = me();
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if (held.has(dir)) throw new DataDirLockedError(`DATA_DIR ${dir} is already open in this process`);
    if (!createExclusive(path, owner)) {
      const text = readText(path);
      if (text === null) continue; // released meanwhile
      const current = ownerOf(path);
      if (current === undefined) continue;
      const state = current === null ? 'dead' : liveness(current, dir);
      if (state !== 'dead') throw refusal(dir, path, current, state);
      if (!takeOver(dir, path, current, text, owner)) {
        sleep(20); // let the winning contender finish, then look again
        continue;
      }
    }
    return hold(dir, path, owner);
  }
  throw refusal(dir, path, ownerOf(path) ?? null, 'alive');
}

function hold(dir: string, path: string, owner: LockOwner): DataDirLock {
  held.set(dir, owner.token);
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.removeListener('exit', release);
    held.delete(dir);
    // Only our own file: never remove a lock someone else holds now.
    if (ownerOf(path)?.token === owner.token) unlinkSync(path);
  };
  process.once('exit', release);
  return { path, release };
}
