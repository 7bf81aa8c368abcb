import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Why `bench` cannot run in `root`, or undefined when `npm run bench` exists there. */
export function benchUnavailable(root: string): string | undefined {
  const manifest = join(root, 'package.json');
  if (!existsSync(manifest)) return `no package.json in ${root}`;
  const scripts = (JSON.parse(readFileSync(manifest, 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
  if (!scripts.bench) return 'the benchmark is not installed: package.json has no "bench" script (run it from a checkout of the registry, which has scripts/bench)';
  return undefined;
}

/** Runs `npm run bench -- <args>` in `root` with inherited stdio; resolves its exit code. */
export function runBench(root: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'bench', '--', ...args], { cwd: root, stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}
