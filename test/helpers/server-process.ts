import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';

import { TEST_SECRET } from './tokens.js';

export const ROOT = new URL('../../', import.meta.url).pathname;

/** A loopback port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A spawned real server (`node --import tsx src/cli/index.ts serve`), with its stderr so far. */
export interface ServerProcess {
  child: ChildProcess;
  stderr(): string;
}

/** The real service as operators run it, on `port`, with `env` over the test defaults. */
export function spawnServer(env: Record<string, string>, port: number): ServerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, JWT_SECRET: TEST_SECRET, EMBEDDING_PROVIDER: 'none', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, stderr: () => stderr };
}

/** Resolves with the child's exit code and signal (at once if it already exited). */
export const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });

/** Waits until `url` answers 2xx; kills the server and throws when it exits or takes over 60 s. */
async function answering({ child, stderr }: ServerProcess, url: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${stderr()}`);
    if (await fetch(url).then((r) => r.ok, () => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start: ${stderr()}`);
}

/** The real server on DATA_DIR `dataDir`; resolves once /healthz answers. */
export async function startServer(dataDir: string, port: number): Promise<ChildProcess> {
  const server = spawnServer({ DATA_DIR: dataDir }, port);
  await answering(server, `http://127.0.0.1:${port}/healthz`);
  return server.child;
}

/** A running service and how to stop it. */
export interface ServiceProcess extends ServerProcess {
  base: string;
  /** SIGTERM, then the exit. */
  stop(): Promise<void>;
}

/** Starts the service with `env` on a free port; resolves once /readyz answers 200. */
export async function startService(env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const server = spawnServer(env, port);
  const base = `http://127.0.0.1:${port}`;
  await answering(server, `${base}/readyz`);
  const stop = async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGTERM');
    await exited(server.child);
  };
  return { ...server, base, stop };
}

/** Runs `serve` with `env`, expecting it to refuse to start: its exit code and stderr. */
export async function failedStart(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const { child, stderr } = spawnServer(env, await freePort());
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const { code } = await exited(child);
  clearTimeout(timer);
  return { code, stderr: stderr() };
}
