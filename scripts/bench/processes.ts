import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A free loopback port. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Peak and current resident set of a process, in MiB (Linux /proc). */
export function memoryOf(pid: number): { peakMiB: number; rssMiB: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
    return { peakMiB: kb('VmHWM') / 1024, rssMiB: kb('VmRSS') / 1024 };
  } catch {
    return { peakMiB: 0, rssMiB: 0 };
  }
}

/** User plus system CPU seconds a process has used so far (Linux /proc; clock ticks of 10 ms). */
export function cpuSecondsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** A child process of the benchmark, killed (by its own pid) when stopped. */
export class Child {
  private exited: Promise<number | null>;
  output = '';

  constructor(readonly process: ChildProcess) {
    this.exited = new Promise((resolve) => process.once('exit', (code) => resolve(code)));
    const keep = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString('utf8')).slice(-20_000);
    };
    process.stdout?.on('data', keep);
    process.stderr?.on('data', keep);
  }

  get pid(): number {
    return this.process.pid!;
  }

  /** Resolves when `pattern` shows in the output; rejects on exit or after `timeoutMs`. */
  async waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = pattern.exec(this.output);
      if (match) return match;
      if (this.process.exitCode !== null) throw new Error(`child exited (${this.process.exitCode}) before ready:\n${this.output.slice(-3000)}`);
      if (Date.now() > deadline) throw new Error(`child not ready after ${timeoutMs} ms:\n${this.output.slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 15_000): Promise<void> {
    if (this.process.exitCode !== null) return;
    this.process.kill('SIGTERM');
    const timer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

/**
 * Starts `node --import tsx <script> ...args` in `root` (default: this checkout) with `env` added.
 * The bench's own DATABASE_URL (the PostgreSQL server for the native legs) is not passed on: an
 * embedded leg that inherited it ran on that server instead of PGlite.
 */
export function startNode(script: string, args: string[], env: Record<string, string>, nodeArgs: string[] = [], root = ROOT): Child {
  const { DATABASE_URL: _server, DATABASE_READ_URL: _replica, ...inherited } = process.env;
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', script, ...args], {
    cwd: root,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Child(child);
}

/**
 * Starts the real service (`tool-registry serve`) of the checkout in `root` (default: this one) and
 * waits until it listens. Returns the start-up time.
 */
export async function startService(env: Record<string, string>, nodeArgs: string[] = [], root = ROOT): Promise<{ child: Child; startupMs: number }> {
  const started = performance.now();
  const child = startNode('src/cli/index.ts', ['serve'], { LOG_LEVEL: 'warn', ...env }, nodeArgs, root);
  const url = `http://127.0.0.1:${env.PORT}/healthz`;
  const deadline = Date.now() + 300_000;
  for (;;) {
    if (child.process.exitCode !== null) throw new Error(`server exited (${child.process.exitCode}):\n${child.output.slice(-3000)}`);
    try {
      if ((await fetch(url)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`server not up after 300 s:\n${child.output.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, startupMs: performance.now() - started };
}

/** Starts a PGlite socket server child on `dataDir`; returns it and its DATABASE_URL. */
export async function startSocketDatabase(dataDir: string, maxConnections: number): Promise<{ child: Child; url: string }> {
  const child = startNode('scripts/bench/pglite-socket-server.ts', [dataDir, String(maxConnections)], {});
  const match = await child.waitFor(/ready (\d+)/, 120_000);
  return { child, url: `postgres://postgres:postgres@127.0.0.1:${match[1]}/postgres?sslmode=disable` };
}
