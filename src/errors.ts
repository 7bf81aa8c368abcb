/** Stable machine-readable error codes of the HTTP API. */
export type ErrorCode =
  | 'bad_request'
  | 'validation_failed'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'precondition_failed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'bad_gateway'
  | 'unavailable'
  | 'internal';

/** HTTP status of each code; exhaustive so a new code cannot ship without one. */
export const statusOf: Record<ErrorCode, number> = {
  bad_request: 400,
  validation_failed: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  bad_gateway: 502,
  unavailable: 503,
  internal: 500,
};

/** One problem with the input, located by a JSON pointer into the request body (or the named part). */
export interface ErrorDetail {
  pointer: string;
  message: string;
  in?: 'body' | 'querystring' | 'params' | 'headers';
}

/** An error meant for the caller: its code and message are safe to send. */
export class AppError extends Error {
  override readonly name = 'AppError';
  readonly statusCode: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.statusCode = statusOf[code];
  }
}

/**
 * The 400 a service answers for input it refuses, whichever door it came through. The message
 * names the fields too: an MCP client sees only the message.
 */
export function invalidInput(problems: ErrorDetail[]): AppError {
  return new AppError('validation_failed', problems.map((p) => `${p.pointer.slice(1) || 'input'} ${p.message}`).join('; '), problems);
}

/** Builds the 404 used for unknown and invisible tools alike, so existence never leaks. */
export function toolNotFound(name: string): AppError {
  return new AppError('not_found', `tool '${name}' not found`);
}
