// Reading driver errors: their cause chains, and the codes that say the database is away.
type Cause = { code?: unknown; message?: unknown; cause?: unknown };

/**
 * `error` and the errors of its cause chain, outermost first (drizzle and pg wrap driver errors);
 * a chain that loops back is walked once.
 */
function causesOf(error: unknown): Cause[] {
  const chain: Cause[] = [];
  for (let e = error; typeof e === 'object' && e !== null && !chain.includes(e as Cause); e = (e as Cause).cause) chain.push(e as Cause);
  return chain;
}

/** Whether a driver error, or one of its causes, carries one of these codes (SQLSTATEs, or errno names). */
export const hasErrorCode = (error: unknown, codes: ReadonlySet<string>): boolean =>
  causesOf(error).some((e) => typeof e.code === 'string' && codes.has(e.code));

// Connection-level failures: the database (or the path to it) is away, not the statement wrong.
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', '57P01', '57P02', '57P03', '08000', '08003', '08006']);
// pg's "Client has encountered a connection error and is not queryable" is what a transaction's
// ROLLBACK gets once its connection died: drizzle throws that rollback error in place of the
// statement's own (57P01 and the like), so it must read as the outage it is, not as a 500.
const CONNECTION_MESSAGES = /Connection terminated|PGlite is closed|timeout exceeded when trying to connect|is not queryable/i;

/** Whether `error` (or one of its causes) says the database could not be reached or dropped the connection. */
export function isConnectionError(error: unknown): boolean {
  return hasErrorCode(error, CONNECTION_CODES) || causesOf(error).some((e) => typeof e.message === 'string' && CONNECTION_MESSAGES.test(e.message));
}

/** The SQLSTATE of a driver error, looking through causes (drizzle wraps driver errors). */
export function sqlState(error: unknown): string | undefined {
  const code = causesOf(error).find((e) => typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code))?.code;
  return code as string | undefined;
}

// The server cancelled the statement (query_canceled: DATABASE_STATEMENT_TIMEOUT_MS or an
// operator's pg_cancel_backend) or gave up waiting for a lock (lock_not_available: lock_timeout).
const CANCELLED_CODES = new Set(['57014', '55P03']);

/**
 * Whether the server cancelled `error`'s statement: the statement was not at fault and the
 * connection is fine, but running it again at once would most likely wait as long again.
 */
export function isCancelled(error: unknown): boolean {
  return hasErrorCode(error, CANCELLED_CODES);
}
