// @ts-check
/**
 * PGlite served over the PostgreSQL wire protocol, safe for a `pg.Pool` of several connections.
 * Plain JavaScript (types in pglite-wire.d.mts) because the embedded database's worker thread
 * (pglite-thread.mjs) runs it without a TypeScript loader, whichever way the service was started.
 *
 * pglite-socket (0.2.17) runs every connection on PGlite's single backend, one protocol message at
 * a time, and keeps a connection's turn only while `isInTransaction()` holds (an explicit BEGIN).
 * `pg` sends each query as Parse, Bind, Describe, Execute, Sync, so another connection's Parse can
 * run between them and replace the unnamed statement or portal: "portal does not exist", rows of
 * another query, or a client waiting forever for a reply that went elsewhere (2,000 concurrent
 * queries from a pool of 4 corrupted 700 of them). Here a connection keeps its turn until the
 * backend's last reply is ReadyForQuery with status idle, so every request and transaction runs whole.
 */
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

/**
 * @param {import('@electric-sql/pglite').PGlite} db
 * @param {{ host?: string, port?: number, path?: string, maxConnections: number }} options
 * @returns {PGLiteSocketServer}
 */
export function servePgliteOverWire(db, options) {
  return new PGLiteSocketServer({ ...options, db: wholeRequestTurns(db) });
}

// ReadyForQuery: 'Z', length 5, then the transaction status ('I' idle, 'T' in a block, 'E' failed).
const READY_FOR_QUERY = [0x5a, 0, 0, 0, 5];
const IDLE = 0x49;

/**
 * Whether `tail` (the last bytes the backend sent) is a ReadyForQuery reporting idle.
 * @param {Uint8Array} tail
 * @returns {boolean}
 */
export function endsIdle(tail) {
  return tail.length === READY_FOR_QUERY.length + 1 && READY_FOR_QUERY.every((byte, i) => tail[i] === byte) && tail[5] === IDLE;
}

/**
 * The last six bytes of `previous` followed by `data`.
 * @param {Uint8Array} previous
 * @param {Uint8Array} data
 * @returns {Uint8Array}
 */
function lastSix(previous, data) {
  if (data.length >= 6) return data.subarray(data.length - 6);
  const joined = new Uint8Array(previous.length + data.length);
  joined.set(previous);
  joined.set(data, previous.length);
  return joined.subarray(Math.max(0, joined.length - 6));
}

/**
 * `db` as pglite-socket sees it: "in a transaction" whenever the backend is not idle and ready.
 * @param {import('@electric-sql/pglite').PGlite} db
 * @returns {import('@electric-sql/pglite').PGlite}
 */
function wholeRequestTurns(db) {
  let busy = false;
  /** @type {import('@electric-sql/pglite').PGlite['execProtocolRawStream']} */
  const execProtocolRawStream = async (message, options) => {
    /** @type {Uint8Array} */
    let tail = new Uint8Array(0);
    let replied = false;
    await db.execProtocolRawStream(message, {
      ...options,
      onRawData: (data) => {
        if (data.length > 0) replied = true;
        tail = lastSix(tail, data);
        options.onRawData(data);
      },
    });
    // A message without a reply (Terminate, CopyData) leaves the turn as it was.
    if (replied) busy = !endsIdle(tail);
  };
  // pglite-socket calls exec only to roll back a disconnected client's transaction.
  /** @type {import('@electric-sql/pglite').PGlite['exec']} */
  const exec = async (...args) => {
    try {
      return await db.exec(...args);
    } finally {
      busy = db.isInTransaction();
    }
  };
  return new Proxy(db, {
    get(target, property) {
      if (property === 'isInTransaction') return () => busy;
      if (property === 'execProtocolRawStream') return execProtocolRawStream;
      if (property === 'exec') return exec;
      const value = Reflect.get(target, property, target);
      // PGlite keeps its state in private fields, so its methods must run on the real instance.
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
