import type { PGlite } from '@electric-sql/pglite';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/** PGlite served over the PostgreSQL wire protocol, one whole request or transaction per turn (see pglite-wire.mjs). */
export function servePgliteOverWire(db: PGlite, options: { host?: string; port?: number; path?: string; maxConnections: number }): PGLiteSocketServer;

/** Whether `tail` (the last bytes the backend sent) is a ReadyForQuery reporting idle. */
export function endsIdle(tail: Uint8Array): boolean;
