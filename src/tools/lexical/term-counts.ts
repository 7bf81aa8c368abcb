import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';

import { type Db, rowsOf } from '../../db/client.js';
import { tools } from '../../db/schema.js';

/** How often the service looks for tenants whose stored counts are stale (a BackgroundJob runs runOnce). */
export const TERM_COUNTS_INTERVAL_MS = 10_000;

interface TermCountOptions {
  /**
   * Tenants with fewer active tools get no stored counts (their revision is recorded with none):
   * counting their lexemes reads at most 20% of a small catalog, cheaper than keeping the rows.
   */
  minTools: number;
  /**
   * A lexeme is stored, with a row for every scope set it occurs in, when the tenant holds at
   * least this many postings of it; discovery counts the others, each fewer than this.
   */
  minPostings: number;
}

const TERM_COUNT_DEFAULTS: TermCountOptions = { minTools: 5_000, minPostings: 64 };

// Arbitrary constant: the first key of pg_try_advisory_xact_lock(key, hashtext(tenant)).
const REBUILD_LOCK_KEY = 0x7465726d;

/**
 * Keeps `term_counts` (migration 0016) in step with each tenant's tools. A tenant is rebuilt once
 * its tools_revision has stayed the same for one interval (a registration burst is not rebuilt
 * after every tool), in one repeatable-read transaction, so the counts and the revision they are
 * recorded under come from the same snapshot. Discovery ignores the rows of any other revision,
 * so a write made meanwhile only sends it back to counting until the next rebuild. Replicas
 * rebuilding together skip a tenant another one holds (advisory lock).
 */
export class TermCountRefresh {
  /** Stale tenants and the revision seen at the previous pass. */
  private readonly seen = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly log: Pick<FastifyBaseLogger, 'debug' | 'warn'>,
    private readonly options: TermCountOptions = TERM_COUNT_DEFAULTS,
  ) {}

  /** One pass: the tenants it rebuilt. Ends early once `signal` is aborted (the app closing). */
  async runOnce(signal?: AbortSignal): Promise<string[]> {
    const stale = await rowsOf<{ tenant_id: string; revision: number }>(
      this.db.execute(sql`
        select r.tenant_id, r.tools_revision::float8 as revision
        from catalog_revisions r left join term_count_revisions c using (tenant_id)
        where c.revision is distinct from r.tools_revision
        order by r.tenant_id`),
    );
    const current = new Map(stale.map((r) => [r.tenant_id, Number(r.revision)]));
    for (const tenant of this.seen.keys()) if (!current.has(tenant)) this.seen.delete(tenant);
    const rebuilt: string[] = [];
    for (const [tenant, revision] of current) {
      if (signal?.aborted) break;
      const settled = this.seen.get(tenant) === revision;
      this.seen.set(tenant, revision);
      if (!settled) continue;
      // One tenant's failure (a database error, a cancelled statement) must not keep the tenants
      // after it from their counts: it is counted at query time, and tried again next pass.
      try {
        if (await this.rebuild(tenant)) {
          this.seen.delete(tenant);
          rebuilt.push(tenant);
        }
      } catch (error) {
        if (signal?.aborted) throw error;
        this.log.warn({ err: error, tenant }, 'storing term counts failed for a tenant; its words are counted at query time until a later pass stores them');
      }
    }
    return rebuilt;
  }

  /** Rebuilds one tenant's rows; false when another replica holds it. */
  private async rebuild(tenant: string): Promise<boolean> {
    const started = performance.now();
    const { minTools, minPostings } = this.options;
    const stored = await this.db.transaction(
      async (tx) => {
        // One aggregate over all the tenant's postings: background work that may outlast the bound of a request's statement.
        await tx.execute(sql`set local statement_timeout = 0`);
        const [lock] = await rowsOf<{ locked: boolean }>(tx.execute(sql`select pg_try_advisory_xact_lock(${REBUILD_LOCK_KEY}, hashtext(${tenant})) as locked`));
        if (lock?.locked !== true) return undefined;
        const [row] = await rowsOf<{ revision: number; active: number }>(
          tx.execute(sql`
            select coalesce((select tools_revision from catalog_revisions where tenant_id = ${tenant}), 0)::float8 as revision,
                   (select count(*) from ${tools} where ${tools.tenantId} = ${tenant} and ${tools.status} = 'active')::int as active`),
        );
        const active = Number(row?.active ?? 0);
        await tx.execute(sql`delete from term_counts where tenant_id = ${tenant}`);
        if (active >= minTools) {
          await tx.execute(sql`
            insert into term_counts (tenant_id, lexeme, scope_set, postings, in_names)
            select ${tenant}, lexeme, scope_set, postings, in_names from (
              select lexeme, scope_set, count(*)::int as postings, (count(*) filter (where tf_a > 0))::int as in_names,
                     sum(count(*)) over (partition by lexeme) as total
              from tool_terms where tenant_id = ${tenant}
              group by lexeme, scope_set
            ) counted
            where total >= ${minPostings}`);
        }
        await tx.execute(sql`
          insert into term_count_revisions (tenant_id, revision) values (${tenant}, ${Number(row?.revision ?? 0)})
          on conflict (tenant_id) do update set revision = excluded.revision`);
        return active;
      },
      { isolationLevel: 'repeatable read' },
    );
    if (stored === undefined) return false;
    this.log.debug({ tenant, activeTools: stored, ms: Math.round(performance.now() - started) }, 'term counts rebuilt');
    return true;
  }
}
