import { sql } from 'drizzle-orm';

import { type Executor, rowsOf } from '../db/client.js';

/**
 * The tenant's catalog revision (migration 0012): bumped at the commit of every change to its
 * tools, by any replica of the service. 0 before the tenant's first change.
 */
export async function catalogRevision(executor: Executor, tenantId: string): Promise<number> {
  const [row] = await rowsOf<{ revision: string | number }>(
    executor.execute(sql`select revision from catalog_revisions where tenant_id = ${tenantId}`),
  );
  return row ? Number(row.revision) : 0;
}
