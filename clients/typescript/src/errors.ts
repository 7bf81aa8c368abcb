import type { ClientErrorCode, ErrorDetail, ServerErrorCode } from './types.js';

/**
 * A failed registry call. `status` is the HTTP status, or 0 when no response arrived (network
 * failure, timeout); `code` is the service's stable error code, or one of the client's own
 * (`network_error`, `timeout`, `invalid_response`).
 */
export class RegistryError extends Error {
  override readonly name = 'RegistryError';

  constructor(
    readonly status: number,
    readonly code: ServerErrorCode | ClientErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    /** The service's request id (x-request-id), to quote when asking operators. */
    readonly request_id: string | undefined = undefined,
    options: { cause?: unknown; retryAfterMs?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.retryAfterMs = options.retryAfterMs;
  }

  /** Delay the service asked for (Retry-After), if any. */
  readonly retryAfterMs: number | undefined;

  /** True for failures worth retrying later: 408, 429, 5xx, network errors and timeouts. */
  get transient(): boolean {
    return this.status === 408 || this.status === 429 || this.status >= 500 || this.code === 'network_error' || this.code === 'timeout';
  }

  /** True when the token was refused (401) or lacks a scope (403): retrying cannot help. */
  get auth(): boolean {
    return this.status === 401 || this.status === 403;
  }

  /** One line per validation detail, for humans. */
  describe(): string {
    const lines = [`${this.message} (${this.status || 'no response'} ${this.code}${this.request_id ? `, request ${this.request_id}` : ''})`];
    for (const d of this.details) lines.push(`  ${d.pointer}: ${d.message}`);
    return lines.join('\n');
  }
}

/** Whether `error` is a RegistryError with one of `codes` (or any code when none given). */
export function isRegistryError(error: unknown, ...codes: (ServerErrorCode | ClientErrorCode)[]): error is RegistryError {
  return error instanceof RegistryError && (codes.length === 0 || codes.includes(error.code));
}
