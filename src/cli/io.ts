import type { FetchLike } from '../../clients/typescript/src/http.js';
import { RegistryClient } from '../../clients/typescript/src/index.js';
import { VERSION } from '../version.js';

/**
 * Where the CLI reads and writes: the process by default, buffers in tests. Commands never touch
 * `process` directly, so the whole CLI runs in-process under test.
 */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  /** Whether stderr is a terminal (progress bars only then). */
  interactive: boolean;
  /** fetch used by the SDK (tests may inject one). */
  fetch?: FetchLike;
  /** Package root (for `bench`); defaults to this repository. */
  root: string;
}

/** The process-backed IO of the real binary. */
export function processIo(): CliIo {
  return {
    stdout: (text) => void process.stdout.write(text),
    stderr: (text) => void process.stderr.write(text),
    env: process.env,
    interactive: Boolean(process.stderr.isTTY),
    root: new URL('../../', import.meta.url).pathname,
  };
}

/** Flags every command that talks to a running registry accepts. */
export interface ConnectionFlags {
  registry?: string;
  token?: string;
  timeout?: number;
  retries?: number;
}

export const DEFAULT_REGISTRY_URL = 'http://localhost:8080';

/** An SDK client from flags, falling back to REGISTRY_URL and REGISTRY_TOKEN. */
export function clientFrom(io: CliIo, flags: ConnectionFlags): RegistryClient {
  return new RegistryClient({
    baseUrl: flags.registry ?? io.env.REGISTRY_URL ?? DEFAULT_REGISTRY_URL,
    token: flags.token ?? io.env.REGISTRY_TOKEN,
    fetch: io.fetch,
    timeoutMs: flags.timeout,
    retry: flags.retries === undefined ? undefined : { retries: flags.retries },
    userAgent: `tool-registry-cli/${VERSION}`,
  });
}
