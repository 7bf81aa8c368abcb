import type { RegistryError } from '../../clients/typescript/src/index.js';

/**
 * Exit codes of the CLI, documented in docs/cli-sdk.md, so CI can tell why a step failed:
 * 0 everything done (or would be, on a dry run); 1 the registry refused a document (or one could
 * not be read); 2 a usage error (bad flags, no documents without --allow-empty); 3 the registry
 * refused the token (401/403; the push stops at the first); 4 the registry is unreachable or
 * unavailable (network, timeout, 5xx or 429 after retries); 5 `--wait` ended before every pushed
 * tool was indexed (timeout or an embedding failure).
 */
export const EXIT = { ok: 0, rejected: 1, usage: 2, auth: 3, unavailable: 4, notIndexed: 5 } as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit code a registry error (its HTTP status, 0 without a response, and code) means. */
export function exitCodeFor(status: number, code: string): ExitCode {
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 0 || status === 408 || status === 429 || status >= 500 || code === 'invalid_response') return EXIT.unavailable;
  return EXIT.rejected;
}

export const exitCodeOf = (error: RegistryError): ExitCode => exitCodeFor(error.status, error.code);
