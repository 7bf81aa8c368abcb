import { setTimeout as sleep } from 'node:timers/promises';

import { type SQL, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';

import { type Db, rowsOf } from '../db/client.js';

/** The append-only logs whose old rows can be deleted (config: *_RETENTION_DAYS). */
export type LogTable = 'discovery_log' | 'audit_log';

/** A log and the age in days past which its rows are deleted; 0 keeps them for good. */
export interface Retained {
  table: LogTable;
  days: number;
}

/**
 * The order in which a tenant's rows of each log age, as its tenant index reads them: the
 * discovery log is indexed by (tenant_id, at), the audit log by (tenant_id, id), whose identity
 * follows insertion. Its `at` is the writing replica's clock, so rows may be out of order by the
 * skew between replicas' clocks: a row is deleted once expired, never before.
 */
const AGE_ORDER: Record<LogTable, SQL> = { discovery_log: sql.raw('at'), audit_log: sql.raw('id') };

export interface RetentionOptions {
  /** Rows one statement deletes: a short statement and short row locks, whatever the backlog. */
  batchRows: number;
  /** Pause between two statements, so a large backlog never holds the database for long. */
  pauseMs: number;
}

const DEFAULTS: RetentionOptions = { batchRows: 2_000, pauseMs: 10 };

// Arbitrary constant: the first key of pg_try_advisory_xact_lock(key, hashtext(table:tenant)).
export const RETENTION_LOCK_KEY = 0x72657461;

/**
 * Deletes log rows older than their retention, tenant by tenant, in small statements. Without it
 * the discovery and audit logs grow by a row per discovery and per authorize call for good, until
 * the database's disk is full for every tenant. Every replica runs it; a replica finding another
 * one deleting a tenant's rows (advisory lock) leaves that tenant to it.
 */
export class LogRetention {
  private readonly options: RetentionOptions;

  constructor(
    private readonly db: Db,
    private readonly retained: readonly Retained[],
    private readonly log: Pick<FastifyBaseLogger, 'info' | 'warn'>,
    options: Partial<RetentionOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  /** Whether any log has a retention, so the service schedules passes at all. */
  get enabled(): boolean {
    return this.retained.some((r) => r.days > 0);
  }

  /** One pass over every log with a retention: rows deleted per table. Ends early once `signal` is aborted. */
  async runOnce(signal?: AbortSignal): Promise<Partial<Record<LogTable, number>>> {
    const deleted: Partial<Record<LogTable, number>> = {};
    for (const { table, days } of this.retained) {
      if (days <= 0 || signal?.aborted) continue;
      let rows = 0;
      // One tenant's failure (a statement cancelled past its bound), or one log's, must not keep the others.
      const failed = (error: unknown, where: object) => {
        if (signal?.aborted) throw error;
        this.log.warn({ err: error, table, ...where }, 'deleting log rows past their retention failed; retrying at the next pass');
      };
      try {
        for (const tenant of await this.tenants(table)) {
          if (signal?.aborted) break;
          try {
            rows += await this.deleteExpired(table, tenant, days, signal);
          } catch (error) {
            failed(error, { tenant });
          }
        }
      } catch (error) {
        failed(error, {});
      } finally {
        deleted[table] = rows;
        if (rows > 0) this.log.info({ table, rows, days }, 'deleted log rows past their retention');
      }
    }
    return deleted;
  }

  /** Deletes one tenant's expired rows of `table`, batch by batch; how many went. */
  private async deleteExpired(table: LogTable, tenant: string, days: number, signal?: AbortSignal): Promise<number> {
    let rows = 0;
    while (!signal?.aborted && (await this.oldestIsExpired(table, tenant, days))) {
      const batch = await this.deleteBatch(table, tenant, days);
      // Nothing deleted: another replica is deleting this tenant's rows.
      if (batch === 0) break;
      rows += batch;
      await sleep(this.options.pauseMs);
    }
    return rows;
  }

  /** The tenants with rows in `table`, one index probe each (a loose index scan: no pass over the rows). */
  private async tenants(table: LogTable): Promise<string[]> {
    const t = sql.raw(table);
    const rows = await rowsOf<{ tenant_id: string }>(
      this.db.execute(sql`
        with recursive tenants(tenant_id) as (
          (select tenant_id from ${t} order by tenant_id limit 1)
          union all
          select (select l.tenant_id from ${t} l where l.tenant_id > tenants.tenant_id order by l.tenant_id limit 1)
          from tenants where tenants.tenant_id is not null
        )
        select tenant_id from tenants where tenant_id is not null`),
    );
    return rows.map((r) => r.tenant_id);
  }

  /** Whether the tenant's oldest row is past the retention (one index entry read). */
  private async oldestIsExpired(table: LogTable, tenant: string, days: number): Promise<boolean> {
    const rows = await rowsOf<{ expired: boolean }>(
      this.db.execute(sql`
        select at < now() - make_interval(days => ${days}) as expired
        from ${sql.raw(table)} where tenant_id = ${tenant} order by ${AGE_ORDER[table]} limit 1`),
    );
    return rows[0]?.expired === true;
  }

  /**
   * Deletes the expired rows among the tenant's oldest `batchRows`; how many went (0 when another
   * replica holds the tenant's lock for this log).
   */
  private async deleteBatch(table: LogTable, tenant: string, days: number): Promise<number> {
    const t = sql.raw(table);
    return this.db.transaction(async (tx) => {
      const [lock] = await rowsOf<{ locked: boolean }>(tx.execute(sql`select pg_try_advisory_xact_lock(${RETENTION_LOCK_KEY}, hashtext(${`${table}:${tenant}`})) as locked`));
      if (lock?.locked !== true) return 0;
      const [row] = await rowsOf<{ deleted: number }>(
        tx.execute(sql`
          with gone as (
            delete from ${t} where tenant_id = ${tenant} and id in (
              select id from (
                select id, at from ${t} where tenant_id = ${tenant} order by ${AGE_ORDER[table]} limit ${this.options.batchRows}
              ) oldest
              where oldest.at < now() - make_interval(days => ${days})
            )
            returning 1
          )
          select count(*)::int as deleted from gone`),
      );
      return row?.deleted ?? 0;
    });
  }
}
