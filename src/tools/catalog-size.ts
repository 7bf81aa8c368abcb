import { sql } from 'drizzle-orm';

import { type Executor, rowsOf } from '../db/client.js';

/** Bounded buckets of a tenant's active tools: a gauge label, never the tenant itself. */
export const CATALOG_SIZE_BUCKETS = ['0', '1-10', '11-100', '101-1000', '1001-10000', '10001+'] as const;
export type CatalogSizeBucket = (typeof CATALOG_SIZE_BUCKETS)[number];

/** The size of every tenant's catalog together, for the operator's gauges. */
export interface CatalogSize {
  tools: { active: number; retired: number };
  /** Tenants by how many active tools they have. */
  tenants: Record<CatalogSizeBucket, number>;
  /** Distinct required-scope sets ever published (each discovery checks the caller against its tenant's). */
  scopeSets: number;
}

/** Counts tools by status and tenants by catalog size: one statement over every tenant. */
export async function catalogSize(executor: Executor): Promise<CatalogSize> {
  const [row] = await rowsOf<Record<string, string | number | null>>(
    executor.execute(sql`
      with per_tenant as (
        select count(*) filter (where status = 'active') as active, count(*) filter (where status = 'retired') as retired
        from tools group by tenant_id
      )
      select coalesce(sum(active), 0) as active, coalesce(sum(retired), 0) as retired,
             count(*) filter (where active = 0) as "0",
             count(*) filter (where active between 1 and 10) as "1-10",
             count(*) filter (where active between 11 and 100) as "11-100",
             count(*) filter (where active between 101 and 1000) as "101-1000",
             count(*) filter (where active between 1001 and 10000) as "1001-10000",
             count(*) filter (where active > 10000) as "10001+",
             (select count(*) from scope_sets) as scope_sets
      from per_tenant`),
  );
  const n = (key: string) => Number(row?.[key] ?? 0);
  return {
    tools: { active: n('active'), retired: n('retired') },
    tenants: Object.fromEntries(CATALOG_SIZE_BUCKETS.map((bucket) => [bucket, n(bucket)])) as Record<CatalogSizeBucket, number>,
    scopeSets: n('scope_sets'),
  };
}
