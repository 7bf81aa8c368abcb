import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

import { PGlite, type Transaction } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { LRUCache } from 'lru-cache';
import pg from 'pg';

import { isConnectionError, sqlState } from './connection-errors.js';
import { resolveDataDir } from './data-dir.js';
import { type DataDirLock, lockDataDir } from './data-dir-lock.js';
import { TurnGate } from './pool-turns.js';
import * as schema from './schema.js';
import { traceClientStatements, tracePgliteStatements } from './statement-spans.js';

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>;
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** Anything queries can run on: the database or an open transaction. */
export type Executor = Db | Tx;

/** Runs raw SQL (several statements allowed) and parameterized queries on one connection. */
export interface SqlSession {
  exec(sqlText: string): Promise<void>;
  query<T>(sqlText: string, params?: unknown[]): Promise<T[]>;
}

/** One open database, whichever driver backs it. */
export interface Database {
  kind: 'pglite' | 'postgres';
  /**
   * Whether CREATE INDEX CONCURRENTLY is safe. Not on PGlite, in process or behind pglite-socket:
   * its one backend serves every connection in turn, so the build would wait for a transaction
   * open on another connection whose next statement is queued behind the build (a deadlock).
   */
  concurrentIndexBuild: boolean;
  db: Db;
  /**
   * The database as `owner` (a tenant) uses it: its statements wait for a connection in that
   * owner's turn when the pool is busy, not behind every other tenant's (`db` is the service's own).
   */
  as(owner: string): Db;
  /** Runs fn in one transaction holding the migration advisory lock (safe with many replicas). */
  withMigrationLock<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  /**
   * Runs fn on one connection reserved for it, outside any transaction, so a SET holds for every
   * statement fn runs (an index build's memory) and for no other caller's once fn resets it.
   */
  withSession<T>(fn: (session: SqlSession) => Promise<T>): Promise<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
  /** The node-postgres pool; absent for PGlite in process, a single connection. */
  pool?: pg.Pool;
}

// Arbitrary constant shared by every replica: pg_advisory_xact_lock key for migrations.
const MIGRATION_LOCK_KEY = 7_346_215_001;

/**
 * Settings of every database session. pgvector's iterative index scans keep walking the HNSW graph
 * until enough rows pass the discovery filter (pgvector 0.8; off by default, when a filtered scan
 * returns at most ef_search rows). Set per session rather than per query: a transaction around
 * each discovery only for SET LOCAL would hold a pooled connection (and, with pglite-socket, every
 * other connection) for the whole statement. JIT compilation is off: every statement here runs
 * in milliseconds, and a cost estimate over jit_above_cost (a retrieval statement on a large
 * catalog) spent ~35 ms compiling a statement that otherwise ran in about 9.
 */
const SESSION_SETTINGS = 'SET hnsw.iterative_scan = relaxed_order; SET hnsw.ef_search = 100; SET jit = off';

/** A pool client's configuration: pg's own, and the bound on one statement (PoolOptions). */
type SessionClientConfig = pg.ClientConfig & { statementTimeoutMs?: number };

/**
 * The SET that gives a session the statement bound, or undefined for none. A SET, not pg's
 * `statement_timeout` startup parameter: connection poolers such as PgBouncer refuse unknown
 * startup parameters, and would refuse every connection.
 */
function statementBound(ms: number | undefined): string | undefined {
  return ms ? `SET statement_timeout = ${Math.trunc(ms)}` : undefined;
}

/**
 * A pool client that applies SESSION_SETTINGS (and its statement bound) once connected, before the
 * pool hands it out, and never crashes the process when its server goes away. pg reports a lost
 * connection to the query in flight and also emits "error" on the client; the pool listens only
 * while a client is idle, so on a client held by a transaction (or a session) that event was an
 * uncaught exception: a database restart or failover with one transaction open stopped the
 * service. The transaction's next statement fails instead, and the pool discards the broken
 * client when it is released.
 */
class SessionClient extends pg.Client {
  private readonly settings: string;

  constructor(config?: string | SessionClientConfig) {
    super(config);
    const bound = statementBound(typeof config === 'object' ? config.statementTimeoutMs : undefined);
    this.settings = bound ? `${SESSION_SETTINGS}; ${bound}` : SESSION_SETTINGS;
    this.on('error', () => undefined);
    traceClientStatements(this);
  }

  override connect(): Promise<pg.Client>;
  override connect(callback: ((err: Error) => void) | ((err: null, client: pg.Client) => void)): void;
  override connect(callback?: ((err: Error) => void) | ((err: null, client: pg.Client) => void)): Promise<pg.Client> | void {
    const connected = super.connect().then(async (client) => {
      await this.query(this.settings);
      return client;
    });
    if (!callback) return connected;
    const done = callback as (err: Error | null, client?: pg.Client) => void;
    connected.then((client) => done(null, client), (error: Error) => done(error));
  }
}

/**
 * A pool whose `query` keeps the connection a statement failed on, and whose checkouts take
 * tenants in turns.
 *
 * pg-pool's own `query` releases its client with the statement's error, which closes the
 * connection: every refused statement (a NUL in a parameter, a bad cast) cost a reconnect, and the
 * embedded database's socket server, which serves exactly the pool's size and notices a closed
 * connection late, refused the replacement ("too many connections"): other tenants' requests got
 * 503 (issue 32, finding 3). A statement error leaves the connection ready for the next query (the
 * server answered it and is idle again); only a connection-level failure, or an error without a
 * SQLSTATE (the client cannot tell the session's state), discards it. Transactions (drizzle) check
 * out a client and release it without an error already; a broken one is dropped as not queryable.
 *
 * pg-pool serves waiting checkouts first come, first served: one tenant's burst of discoveries
 * filled its queue and every other tenant's statement waited behind all of it. Every checkout
 * therefore first takes one of the pool's `max` places from a TurnGate, in turns across owners
 * (the pool itself checks out as the service, '', and `poolAs` gives a tenant's view); pg-pool's
 * own queue stays empty. `connectionTimeoutMillis` bounds the wait for a place, as it bounded
 * pg-pool's. The owner is passed explicitly rather than carried in an AsyncLocalStorage: that
 * store's promise hooks cost every request of the service ~10 % of cached-discovery throughput.
 */
class StatementSafePool extends pg.Pool {
  private readonly turns: TurnGate;
  /** Clients pg-pool is closing whose places go back once they are closed. */
  private readonly closing = new Set<pg.Client>();

  constructor(config: pg.PoolConfig) {
    super(config);
    this.turns = new TurnGate(config.max ?? 10);
    // pg-pool's waitingCount counts only its own queue, which the gate keeps empty.
    Object.defineProperty(this, 'waitingCount', { get: () => this.turns.queued });
    this.on('remove', (client) => {
      if (this.closing.delete(client)) this.turns.release();
    });
    // Promise style only: drizzle and this code never pass callbacks or submittables.
    this.query = ((config: string | pg.QueryConfig, values?: unknown[]) => this.queryAs('', config, values)) as unknown as pg.Pool['query'];
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void): void;
  override connect(
    callback?: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void,
  ): Promise<pg.PoolClient> | void {
    const connected = this.connectAs('');
    if (!callback) return connected;
    connected.then(
      (client) => callback(undefined, client, (release) => client.release(release as Error | boolean | undefined)),
      (error: Error) => callback(error, undefined, () => undefined),
    );
  }

  /** A client checked out in `owner`'s turn. */
  async connectAs(owner: string): Promise<pg.PoolClient> {
    await this.turns.acquire(owner, this.options.connectionTimeoutMillis ?? 0);
    let client: pg.PoolClient;
    try {
      client = await super.connect();
    } catch (error) {
      this.turns.release();
      throw error;
    }
    // pg-pool gives each checkout its own release (which throws if called twice). The place goes
    // back once the client is idle in the pool again, so the next owner's checkout finds it; or,
    // when pg-pool drops the client (released with an error, or broken), once it is closed, as
    // pg-pool itself serves its queue: a replacement opened before that could exceed the
    // connections the server allows (the embedded socket server allows exactly the pool's size).
    // The client is marked closing before pg-pool sees it, because a client whose connection has
    // already ended is removed, and 'remove' emitted, within the release itself.
    //
    // A client whose connection ends while checked out is released at once: it can run nothing
    // more, and a holder may never release it (drizzle's transaction sends BEGIN outside its
    // try/finally, so a BEGIN on a dead connection kept its client, and its place, for good: a
    // database restart during a burst could take every place and wedge the service). The holder's
    // own release then does nothing.
    const release = client.release.bind(client);
    let released = false;
    const giveBack = (err?: Error | boolean): void => {
      if (released) return;
      released = true;
      client.off('end', died);
      this.closing.add(client);
      release(err);
      if (this.holds(client)) {
        this.closing.delete(client);
        this.turns.release();
      }
    };
    const died = (): void => giveBack(new Error('the connection ended while checked out'));
    client.once('end', died);
    client.release = giveBack;
    return client;
  }

  /** Whether pg-pool still holds `client` (pg-pool keeps its list private; `_remove` takes a client out of it at once). */
  private holds(client: pg.PoolClient): boolean {
    return (this as unknown as { _clients: pg.Client[] })._clients.includes(client);
  }

  /** One statement on a client checked out in `owner`'s turn, which keeps its connection unless the connection failed. */
  async queryAs(owner: string, config: string | pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult> {
    const client = await this.connectAs(owner);
    let broken: Error | undefined;
    try {
      return await client.query(config, values);
    } catch (error) {
      if (isConnectionError(error) || sqlState(error) === undefined) broken = error as Error;
      throw error;
    } finally {
      client.release(broken);
    }
  }
}

/**
 * `pool` as `owner` (a tenant) sees it: the same connections, checked out in that owner's turn.
 * A pool this module did not make has no turns and is returned as it is.
 */
export function poolAs(pool: pg.Pool, owner: string): pg.Pool {
  if (!(pool instanceof StatementSafePool)) return pool;
  // Everything else (events, counts, end) is the pool's own, through the prototype; drizzle still
  // sees a pg.Pool and checks a client out for a transaction.
  const view = Object.create(pool) as StatementSafePool;
  view.connect = (() => pool.connectAs(owner)) as StatementSafePool['connect'];
  view.query = ((config: string | pg.QueryConfig, values?: unknown[]) => pool.queryAs(owner, config, values)) as unknown as pg.Pool['query'];
  return view;
}

// Drizzle databases kept per owner (building one walks the schema, ~5 KB and 0.06 ms): the most recently used tenants'.
const OWNER_VIEWS = 1_000;

/** `make(owner)`, built once per owner and kept for the OWNER_VIEWS most recently used owners. */
export function perOwner(make: (owner: string) => Db): (owner: string) => Db {
  const views = new LRUCache<string, Db>({ max: OWNER_VIEWS, memoMethod: make });
  return (owner) => views.memo(owner);
}

/** How a pool's connections are made: pg-pool's own options, and the bound on one statement. */
export interface PoolOptions extends Omit<pg.PoolConfig, 'connectionString' | 'max' | 'Client' | 'statement_timeout'> {
  /**
   * The server cancels a statement running longer (SQLSTATE 57014), so one slow statement (a wait
   * for a lock held elsewhere, a plan reading far more than its answer) cannot hold a pooled
   * connection, and with it a place every tenant needs, for good. 0 or absent: the service sets
   * no bound (a role's or database's own `statement_timeout` still applies).
   */
  statementTimeoutMs?: number;
}

/** A node-postgres pool whose sessions carry SESSION_SETTINGS, keep their connection when a statement fails, and take tenants in turns. */
export function createPool(url: string, poolSize: number, options: PoolOptions = {}): pg.Pool {
  // pg-pool hands its whole configuration to each client it makes: SessionClient reads the bound from it.
  const pool = new StatementSafePool({ ...options, connectionString: url, max: poolSize, Client: SessionClient });
  // An idle client losing its server must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  return pool;
}

function clientSession(client: pg.PoolClient): SqlSession {
  return {
    exec: async (text) => void (await client.query(text)),
    query: async <T>(text: string, params?: unknown[]) => (await client.query(text, params)).rows as T[],
  };
}

/** Opens PostgreSQL at `url` through a node-postgres pool; fails clearly without pgvector. */
export async function openPostgres(url: string, poolSize = 10, options: Pick<PoolOptions, 'statementTimeoutMs'> = {}): Promise<Database> {
  const pool = createPool(url, poolSize, options);
  let version: string;
  try {
    const { rows } = await pool.query<{ available: boolean; version: string }>(
      "select exists (select 1 from pg_available_extensions where name = 'vector') as available, version() as version",
    );
    if (!rows[0]?.available) {
      throw new Error('the PostgreSQL server at DATABASE_URL lacks the pgvector extension ("vector"); use the pgvector/pgvector image or install pgvector');
    }
    version = rows[0].version;
  } catch (error) {
    await pool.end();
    throw error;
  }
  // PGlite over the wire (pglite-socket) names itself in version(): "PostgreSQL 18.6 (PGlite 0.5.14) on wasm32…".
  const pglite = /\(PGlite /.test(version);
  return {
    // PGlite behind a socket is still PGlite (no autovacuum: services.ts maintains its tables).
    kind: pglite ? 'pglite' : 'postgres',
    concurrentIndexBuild: !pglite,
    db: drizzleNodePg({ client: pool, schema }) as unknown as Db,
    as: perOwner((owner) => drizzleNodePg({ client: poolAs(pool, owner), schema }) as unknown as Db),
    async withMigrationLock(fn) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        // A migration may rewrite a large table, and waits for another replica's migrations.
        await client.query('set local statement_timeout = 0');
        await client.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
        const result = await fn(clientSession(client));
        await client.query('commit');
        return result;
      } catch (error) {
        await client.query('rollback').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async withSession(fn) {
      const client = await pool.connect();
      try {
        // What runs here (an index build over every vector) may take minutes: no statement bound.
        await client.query('set statement_timeout = 0');
        const result = await fn(clientSession(client));
        // Back to the pool's bound; without one, to the role's or database's own (RESET), as a new connection has.
        await client.query(statementBound(options.statementTimeoutMs) ?? 'reset statement_timeout');
        client.release();
        return result;
      } catch (error) {
        // fn may have stopped between a SET and its RESET: close the connection rather than pool it.
        client.release(true);
        throw error;
      }
    },
    ping: async () => void (await pool.query('select 1')),
    close: () => pool.end(),
    pool,
  };
}

const THREAD_URL = new URL('./pglite-thread.mjs', import.meta.url);
// The socket's name as libpq and pg derive it from a directory and a port.
const SOCKET_PORT = 5432;

/**
 * Opens the embedded database in `dataDir` (`memory://` for an ephemeral one): PGlite on a worker
 * thread of its own (pglite-thread.mjs), reached through a `pg` pool over a Unix socket in a
 * private directory (mode 0700, removed on close). PGlite's backend is WASM that runs each
 * statement to completion on the thread that owns it; in process, every statement stopped every
 * other request (at 2,000 tools a discovery statement held the event loop for ~15 ms). The
 * process stops with an error if the thread dies: its database is gone with it.
 */
export async function openEmbedded(dataDir: string, poolSize = 10): Promise<Database> {
  const { dir, lock } = holdDataDir(dataDir);
  const socketDir = mkdtempSync(join(tmpdir(), 'tool-registry-db-'));
  const cleanUp = () => {
    rmSync(socketDir, { recursive: true, force: true });
    lock?.release();
  };
  let closing = false;
  let lost: Error | undefined;
  const worker = new Worker(THREAD_URL, { workerData: { dataDir: dir, socket: join(socketDir, `.s.PGSQL.${SOCKET_PORT}`), maxConnections: poolSize } });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  let database: Database;
  try {
    await new Promise<void>((resolve, reject) => {
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the embedded database thread exited (${code}) while opening ${dataDir}`)));
      worker.once('message', () => resolve());
    });
    worker.on('error', (error) => (lost = error));
    worker.on('exit', (code) => {
      if (closing) return;
      cleanUp();
      throw new Error(`the embedded database thread exited (${code})${lost ? `: ${lost.message}` : ''}`);
    });
    database = await openPostgres(`postgres://postgres@${encodeURIComponent(socketDir)}:${SOCKET_PORT}/postgres`, poolSize);
  } catch (error) {
    closing = true;
    await worker.terminate();
    cleanUp();
    throw error;
  }
  return {
    ...database,
    close: async () => {
      closing = true;
      try {
        await database.close();
        const stopped = new Promise<void>((resolve) => worker.once('message', () => resolve()));
        worker.postMessage({ stop: true });
        await Promise.race([stopped, exited]);
        await worker.terminate();
      } finally {
        cleanUp();
      }
    },
  };
}

/**
 * The folder an embedded DATA_DIR really names (resolved once: src/db/data-dir.ts) and its lock;
 * no lock for `memory://`. One process per folder: a second one would split the database
 * (src/db/data-dir-lock.ts). PGlite is then given the resolved path, never the spelling.
 */
function holdDataDir(dataDir: string): { dir: string; lock: DataDirLock | undefined } {
  const place = resolveDataDir(dataDir);
  if (place.kind === 'memory') return { dir: 'memory://', lock: undefined };
  return { dir: place.path, lock: lockDataDir(place.path) };
}

/** Opens the embedded PGlite database in `dataDir` in this thread (`memory://` for an ephemeral one). */
export async function openPglite(dataDir: string): Promise<Database> {
  const { dir, lock } = holdDataDir(dataDir);
  try {
    const database = fromPglite(await PGlite.create({ dataDir: dir, extensions: { vector } }));
    return { ...database, close: () => database.close().finally(() => lock?.release()) };
  } catch (error) {
    lock?.release();
    throw error;
  }
}

/** Wraps an already open PGlite instance (tests clone one migrated database per file). */
export function fromPglite(client: PGlite): Database {
  tracePgliteStatements(client);
  const db = drizzlePglite({ client, schema }) as unknown as Db;
  // PGlite runs queries one at a time in submission order: this precedes every other query.
  void client.exec(SESSION_SETTINGS).catch(() => undefined);
  return {
    kind: 'pglite',
    concurrentIndexBuild: false,
    db,
    // One connection, every statement in submission order: there are no turns to take.
    as: () => db,
    // PGlite is a single connection that serializes transactions, so the transaction is the lock.
    withMigrationLock: (fn) =>
      client.transaction((tx) => fn(pgliteSession(tx))),
    // The one connection is every caller's: fn's statements interleave with theirs.
    withSession: (fn) => fn(pgliteSession(client)),
    ping: async () => void (await client.query('select 1')),
    close: () => client.close(),
  };
}

function pgliteSession(target: Pick<Transaction, 'exec' | 'query'>): SqlSession {
  return {
    exec: async (text) => void (await target.exec(text)),
    query: async <T>(text: string, params?: unknown[]) => (await target.query<T>(text, params)).rows,
  };
}

/** Rows of a raw query, whichever driver ran it (both return `{ rows }`). */
export async function rowsOf<T>(result: Promise<unknown> | unknown): Promise<T[]> {
  return ((await result) as { rows: T[] }).rows;
}
