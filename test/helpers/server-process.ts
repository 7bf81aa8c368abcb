import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

import { TEST_SECRET } from './tokens.js';

const ROOT = new URL('../../', import.meta.url).pathname;

/** A port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The real service as operators run it (`node --import tsx src/cli/index.ts serve`). */
export interface ServiceProcess {
  child: ChildProcess;
  base: string;
  stderr(): string;
  /** SIGTERM, then the exit. */
  stop(): Promise<void>;
}

function launch(env: Record<string, string>, port: number): { child: ChildProcess; stderr: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, JWT_SECRET: TEST_SECRET, EMBEDDING_PROVIDER: 'none', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, stderr: () => stderr };
}

/** Starts the service with `env` on a free port; resolves once /readyz answers 200. */
export async function startService(env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const { child, stderr } = launch(env, port);
  const base = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${stderr()}`);
    const ok = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
    if (ok) return { child, base, stderr, stop };
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start: ${stderr()}`);
}

/** Runs `serve` with `env`, expecting it to refuse to start: its exit code and stderr. */
export async function failedStart(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const { child, stderr } = launch(env, await freePort());
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  clearTimeout(timer);
  return { code, stderr: stderr() };
}
