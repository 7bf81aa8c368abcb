/**
 * The read replica (DATABASE_READ_URL): a second node-postgres pool on a streaming replica of the
 * primary, and a drizzle database that sends each read to it while it is healthy, else to the
 * primary. A read that fails on the replica for want of a connection runs again on the primary,
 * so losing the replica never fails a request. A background check (every checkIntervalMs) tells
 * when it is back, whether it is still in recovery, and how far it lags.
 */
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import type pg from 'pg';

import type { ReadReplicaConfig } from '../config.js';
import { createPool, type Database, type Db, perOwner, poolAs } from './client.js';
import { isConnectionError, sqlState } from './connection-errors.js';
import { LagClock, parseLsn } from './replica-lag.js';
import * as schema from './schema.js';

/** Why reads are (or are not) on the replica. */
type ReplicaState = 'ok' | 'unreachable' | 'not_in_recovery' | 'lagging';

/** Where reads went, for metrics and tests. */
interface ReadCounts {
  replica: number;
  primary: number;
  /** Reads that failed on the replica and were answered by the primary. */
  fellBack: number;
}

// Errors on the replica worth answering from the primary besides lost connections: a query
// cancelled by a conflict with WAL replay (40001 on a hot standby), and a relation or column the
// replica has not replayed yet (a migration just applied on the primary).
const RETRY_ON_PRIMARY = new Set(['40001', '42P01', '42703', '42883']);

const CONNECT_TIMEOUT_MS = 2_000;
const CHECK_TIMEOUT_MS = 2_000;
/** How long start-up waits for the replica to replay the primary's schema before checking it. */
const STARTUP_CATCH_UP_MS = 10_000;

/** Thrown when DATABASE_READ_URL does not name a usable replica of DATABASE_URL. */
class ReadReplicaError extends Error {
  override readonly name = 'ReadReplicaError';
}

interface Logger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

async function one<T>(pool: pg.Pool, text: string): Promise<T> {
  const { rows } = await pool.query({ text, query_timeout: CHECK_TIMEOUT_MS } as pg.QueryConfig);
  return rows[0] as T;
}

/**
 * A pg.Pool look-alike for drizzle that routes each query. Its name must contain "Pool": drizzle
 * then asks it for a connection to run a transaction, which it refuses: transactions (and every
 * write) belong on the primary.
 */
class RoutingPool {
  constructor(
    private readonly replica: pg.Pool,
    private readonly primary: pg.Pool,
    private readonly router: ReadReplica,
  ) {}

  async query(config: pg.QueryConfig, values?: unknown[]): Promise<pg.QueryResult> {
    const counts = this.router.counts;
    if (this.router.state !== 'ok') {
      counts.primary += 1;
      return this.primary.query(config, values);
    }
    try {
      const result = await this.replica.query(config, values);
      counts.replica += 1;
      return result;
    } catch (error) {
      const lost = isConnectionError(error);
      if (!lost && !RETRY_ON_PRIMARY.has(sqlState(error) ?? '')) throw error;
      if (lost) this.router.markUnreachable(error);
      counts.fellBack += 1;
      counts.primary += 1;
      return this.primary.query(config, values);
    }
  }

  connect(): never {
    throw new Error('the read replica pool runs no transactions: open them on the primary');
  }
}

/** The replica pool, its routing drizzle database and its health. */
export class ReadReplica {
  /** Reads that may come from the replica: drizzle over the routing pool. */
  readonly db: Db;
  /** The same reads as `owner` (a tenant) makes them: each pool's connections in that owner's turn. */
  readonly as: (owner: string) => Db;
  readonly counts: ReadCounts = { replica: 0, primary: 0, fellBack: 0 };
  private current: ReplicaState = 'ok';
  private lastLagMs: number | undefined = 0;
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private readonly clock: LagClock;

  constructor(
    private readonly pool: pg.Pool,
    private readonly primary: pg.Pool,
    private readonly config: ReadReplicaConfig,
    private readonly log: Logger,
  ) {
    this.db = drizzleNodePg({ client: new RoutingPool(pool, primary, this) as unknown as pg.Pool, schema }) as unknown as Db;
    this.as = perOwner((owner) => drizzleNodePg({ client: new RoutingPool(poolAs(pool, owner), poolAs(primary, owner), this) as unknown as pg.Pool, schema }) as unknown as Db);
    this.clock = new LagClock(Math.max(config.maxLagMs, config.checkIntervalMs) * 2);
  }

  get state(): ReplicaState {
    return this.current;
  }

  /** The replica's lag as of the last check (an upper bound, ms); undefined when unknown. */
  get lagMs(): number | undefined {
    return this.lastLagMs;
  }

  /** The readiness line: 'ok', or 'degraded: …' while the primary serves the reads. */
  readiness(): string {
    switch (this.current) {
      case 'ok':
        return 'ok';
      case 'unreachable':
        return 'degraded: replica unreachable, reads served by the primary';
      case 'not_in_recovery':
        return 'degraded: replica is not in recovery (promoted?), reads served by the primary';
      case 'lagging':
        return `degraded: replica ${this.lastLagMs === undefined ? 'lag unknown' : `${this.lastLagMs} ms behind`} (limit ${this.config.maxLagMs} ms), reads served by the primary`;
    }
  }

  /** Starts the periodic check. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check(), this.config.checkIntervalMs);
    this.timer.unref();
  }

  /** Called by the routing pool when a read lost its connection: the primary takes reads until a check succeeds. */
  markUnreachable(error: unknown): void {
    this.transition('unreachable', { err: messageOf(error) });
  }

  /**
   * One check: samples the primary's WAL position, then asks the replica whether it is in
   * recovery and how far it has replayed. Concurrent calls share one check.
   */
  check(): Promise<void> {
    this.checking ??= this.runCheck().finally(() => (this.checking = undefined));
    return this.checking;
  }

  private async runCheck(): Promise<void> {
    try {
      const { lsn } = await one<{ lsn: string }>(this.primary, 'select pg_current_wal_lsn()::text as lsn');
      this.clock.record(Date.now(), parseLsn(lsn));
    } catch {
      // The primary is away: readiness reports it; the replica's lag cannot be judged meanwhile.
    }
    let status: { recovery: boolean; replayed: string | null };
    try {
      status = await one(this.pool, 'select pg_is_in_recovery() as recovery, pg_last_wal_replay_lsn()::text as replayed');
    } catch (error) {
      this.transition('unreachable', { err: messageOf(error) });
      return;
    }
    if (!status.recovery) {
      this.transition('not_in_recovery', {});
      return;
    }
    this.lastLagMs = status.replayed === null ? undefined : this.clock.lag(parseLsn(status.replayed), Date.now());
    const lagging = this.config.maxLagMs > 0 && (this.lastLagMs === undefined || this.lastLagMs > this.config.maxLagMs);
    this.transition(lagging ? 'lagging' : 'ok', { lagMs: this.lastLagMs });
  }

  private transition(next: ReplicaState, details: object): void {
    if (next === this.current) return;
    const previous = this.current;
    this.current = next;
    if (next === 'ok') this.log.info({ previous, ...details }, 'read replica serves reads again');
    else this.log.warn({ state: next, ...details }, 'read replica unusable: reads go to the primary');
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.checking;
    await this.pool.end();
  }
}

/**
 * Opens DATABASE_READ_URL next to the open, migrated primary and checks it is what reads need: a
 * reachable server in recovery, replicating the same cluster and database, holding the schema and
 * the `vector` extension. Waits (up to 10 s) for it to replay the primary's WAL so a migration
 * just applied is there. Every failure names DATABASE_READ_URL.
 */
export async function openReadReplica(config: ReadReplicaConfig, primary: Database, log: Logger): Promise<ReadReplica> {
  if (!primary.pool) throw new ReadReplicaError('DATABASE_READ_URL needs DATABASE_URL: the embedded database has no replicas');
  const pool = createPool(config.url, config.poolSize, { connectionTimeoutMillis: CONNECT_TIMEOUT_MS, statementTimeoutMs: config.statementTimeoutMs });
  try {
    await verifyReplica(pool, primary.pool);
  } catch (error) {
    await pool.end();
    if (error instanceof ReadReplicaError) throw error;
    throw new ReadReplicaError(`DATABASE_READ_URL: cannot use the read replica: ${messageOf(error)}`);
  }
  const replica = new ReadReplica(pool, primary.pool, config, log);
  await replica.check();
  replica.start();
  return replica;
}

async function verifyReplica(pool: pg.Pool, primary: pg.Pool): Promise<void> {
  const identity = `select current_database() as database, (select system_identifier::text from pg_control_system()) as system`;
  let replica: { database: string; system: string; recovery: boolean };
  try {
    replica = await one(pool, `${identity}, pg_is_in_recovery() as recovery`);
  } catch (error) {
    throw new ReadReplicaError(`DATABASE_READ_URL: cannot reach the read replica: ${messageOf(error)}`);
  }
  if (!replica.recovery) {
    throw new ReadReplicaError('DATABASE_READ_URL names a server that is not in recovery (a primary, not a read replica); point it at a streaming replica of DATABASE_URL');
  }
  const main = await one<{ database: string; system: string; lsn: string }>(primary, `${identity}, pg_current_wal_lsn()::text as lsn`);
  if (replica.system !== main.system) {
    throw new ReadReplicaError(`DATABASE_READ_URL replicates another cluster (system identifier ${replica.system}; DATABASE_URL's is ${main.system})`);
  }
  if (replica.database !== main.database) {
    throw new ReadReplicaError(`DATABASE_READ_URL names database '${replica.database}' but DATABASE_URL names '${main.database}'`);
  }
  const target = parseLsn(main.lsn);
  for (const deadline = Date.now() + STARTUP_CATCH_UP_MS; ; ) {
    const { replayed } = await one<{ replayed: string | null }>(pool, 'select pg_last_wal_replay_lsn()::text as replayed');
    if ((replayed !== null && parseLsn(replayed) >= target) || Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const contents = await one<{ vector: boolean; tools: boolean }>(
    pool,
    "select exists (select 1 from pg_extension where extname = 'vector') as vector, to_regclass('tools') is not null as tools",
  );
  if (!contents.vector) {
    throw new ReadReplicaError('DATABASE_READ_URL: the read replica\'s database has no "vector" extension; it must be a streaming replica of DATABASE_URL, where the migrations create it');
  }
  if (!contents.tools) {
    throw new ReadReplicaError("DATABASE_READ_URL: the read replica has no 'tools' table on its search_path; give it the same database and search_path as DATABASE_URL");
  }
}
