// Connection-level failures: the database (or the path to it) is away, not the statement wrong.
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', '57P01', '57P02', '57P03', '08000', '08003', '08006']);
const CONNECTION_MESSAGES = /Connection terminated|PGlite is closed|timeout exceeded when trying to connect/i;

/** Whether `error` (or one of its causes) says the database could not be reached or dropped the connection. */
export function isConnectionError(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e = error as { code?: string; cause?: unknown; message?: string } | undefined; e && !seen.has(e); e = e.cause as typeof e) {
    seen.add(e);
    if (e.code && CONNECTION_CODES.has(e.code)) return true;
    if (typeof e.message === 'string' && CONNECTION_MESSAGES.test(e.message)) return true;
  }
  return false;
}

/** The SQLSTATE of a driver error, looking through causes (drizzle wraps driver errors). */
export function sqlState(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  for (let e = error as { code?: string; cause?: unknown } | undefined; e && !seen.has(e); e = e.cause as typeof e) {
    seen.add(e);
    if (typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) return e.code;
  }
  return undefined;
}
