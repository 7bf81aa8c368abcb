import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';

import { type Db, rowsOf } from '../db/client.js';

/** Tables the discovery statements plan over: vacuumed and analyzed. */
const TABLES = ['tools', 'tool_terms', 'tool_embeddings', 'tool_usage'] as const;
/**
 * The logs whose old rows retention deletes (src/retention/): vacuumed, so their space is used
 * again, and analyzed once and then each time they have doubled. Without statistics the planner
 * read and sorted a tenant's whole log for each batch retention deletes (191 ms a batch at 360,000
 * rows of one tenant, 13 ms once analyzed); analyzing a log that grows with every call at the tables' scale would
 * hold the one backend again and again.
 */
const LOGS: readonly string[] = ['discovery_log', 'audit_log'];
const LOG_ANALYZE_SCALE = 1;

/** How often the service reads the modification counters (a BackgroundJob runs runOnce). */
export const MAINTENANCE_INTERVAL_MS = 10_000;

interface MaintenanceOptions {
  /** PostgreSQL's autovacuum defaults: act once changes exceed threshold + scale x rows. */
  analyzeThreshold: number;
  analyzeScale: number;
  vacuumThreshold: number;
  vacuumScale: number;
}

const DEFAULTS: MaintenanceOptions = { analyzeThreshold: 50, analyzeScale: 0.1, vacuumThreshold: 50, vacuumScale: 0.2 };

interface TableState {
  table: string;
  rows: number;
  modified: number;
  dead: number;
}

/**
 * Autovacuum for the embedded database. PGlite runs no background workers, so its tables were
 * never ANALYZEd and the planner guessed one row per table: it read a tenant's whole catalog to
 * fetch three shortlisted rows and chose nested loops over thousands of vectors. This applies
 * PostgreSQL's own autovacuum rule (threshold + scale x rows, from pg_stat counters), one table at
 * a time, and analyzes tables never analyzed; the service runs a pass at start-up and then every
 * MAINTENANCE_INTERVAL_MS. External PostgreSQL has
 * autovacuum: the service does not run this there.
 */
export class TableMaintenance {
  constructor(
    private readonly db: Db,
    private readonly log: Pick<FastifyBaseLogger, 'debug'>,
    private readonly options: MaintenanceOptions = DEFAULTS,
  ) {}

  /** One pass: what it did, table by table. Ends early once `signal` is aborted (the app closing). */
  async runOnce(signal?: AbortSignal): Promise<string[]> {
    const done: string[] = [];
    for (const state of await this.states()) {
      if (signal?.aborted) break;
      const action = this.actionFor(state);
      if (!action) continue;
      const started = performance.now();
      // Table names come from the fixed list above, never from input.
      await this.db.execute(sql.raw(`${action} ${state.table}`));
      this.log.debug({ table: state.table, action, ms: Math.round(performance.now() - started) }, 'table maintenance');
      done.push(`${action} ${state.table}`);
    }
    return done;
  }

  private actionFor(state: TableState): string | undefined {
    const o = this.options;
    const rows = Math.max(state.rows, 0);
    const vacuum = state.dead > o.vacuumThreshold + o.vacuumScale * rows;
    const analyzeScale = LOGS.includes(state.table) ? LOG_ANALYZE_SCALE : o.analyzeScale;
    const analyze = state.rows < 0 || state.modified > o.analyzeThreshold + analyzeScale * rows;
    if (vacuum) return analyze ? 'vacuum analyze' : 'vacuum';
    return analyze ? 'analyze' : undefined;
  }

  /** reltuples is -1 until a table is first analyzed; the counters restart with the process. */
  private async states(): Promise<TableState[]> {
    const rows = await rowsOf<{ table: string; rows: number; modified: number | null; dead: number | null }>(
      this.db.execute(sql`
        select c.relname as table, c.reltuples::float8 as rows,
               s.n_mod_since_analyze::float8 as modified, s.n_dead_tup::float8 as dead
        from pg_class c
        join pg_namespace n on n.oid = c.relnamespace and n.nspname = current_schema()
        left join pg_stat_user_tables s on s.relid = c.oid
        where c.relkind = 'r' and c.relname in (${sql.join([...TABLES, ...LOGS].map((t) => sql`${t}`), sql`, `)})
        order by c.relname`),
    );
    return rows.map((r) => ({ table: r.table, rows: Number(r.rows), modified: Number(r.modified ?? 0), dead: Number(r.dead ?? 0) }));
  }
}
