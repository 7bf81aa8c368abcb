import { runCli } from '../../src/cli/program.js';

/** The outcome of one in-process CLI run. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in-process with captured output and the given environment (nothing from process.env). */
export async function cli(argv: string[], env: Record<string, string | undefined> = {}, root?: string): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    env,
    interactive: false,
    ...(root ? { root } : {}),
  });
  return { code, stdout, stderr };
}
