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

/** A spawned real server (`node --import tsx src/cli/index.ts serve`) on DATA_DIR, with its stderr so far. */
export interface ServerProcess {
  child: ChildProcess;
  stderr(): string;
}

export function spawnServer(dataDir: string, port: number): ServerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/index.ts', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, JWT_SECRET: TEST_SECRET, EMBEDDING_PROVIDER: 'none', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return { child, stderr: () => stderr };
}

/** The real server as operators run it, on DATA_DIR; resolves once /healthz answers. */
export async function startServer(dataDir: string, port: number): Promise<ChildProcess> {
  const { child, stderr } = spawnServer(dataDir, port);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}: ${stderr()}`);
    const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
    if (ok) return child;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not start: ${stderr()}`);
}

/** Resolves with the child's exit code and signal (at once if it already exited). */
export const exited = (child: ChildProcess) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve({ code: child.exitCode, signal: child.signalCode });
    else child.once('exit', (code, signal) => resolve({ code, signal }));
  });
