import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';

import { type Db, rowsOf } from '../db/client.js';
import { tools } from '../db/schema.js';
import { FORMATS } from './formats.js';
import type { ToolDocument } from './model.js';
import { tokenCosts } from './tokens.js';

const BATCH = 100;

/**
 * Re-prices tools stored before the current set of formats (their `token_costs` lacks one): their
 * costs were counted with an older rendering (no `not_for` in the description, fewer formats).
 * The service runs it once in the background after start-up, in small batches, so a large catalog
 * does not hold the database; a row re-published meanwhile is skipped (its costs are already current).
 */
export class TokenCostBackfill {
  constructor(
    private readonly db: Db,
    private readonly log: Pick<FastifyBaseLogger, 'info'>,
  ) {}

  /** Re-prices every stale row (until `signal` is aborted); resolves with how many were updated. */
  async run(signal?: AbortSignal): Promise<number> {
    const keys = sql.raw(`array[${FORMATS.map((f) => `'${f}'`).join(', ')}]`);
    let updated = 0;
    let after = 0;
    while (!signal?.aborted) {
      const rows = await rowsOf<{ id: number | string; revision: number; document: ToolDocument }>(
        this.db.execute(sql`select id, revision, document from ${tools} where id > ${after} and not (token_costs ?& ${keys}) order by id limit ${BATCH}`),
      );
      if (rows.length === 0) break;
      for (const row of rows) {
        const costs = tokenCosts(row.document);
        await this.db.execute(sql`update ${tools} set token_costs = ${JSON.stringify(costs)}::jsonb where id = ${row.id} and revision = ${row.revision}`);
        updated += 1;
      }
      after = Number(rows.at(-1)!.id);
    }
    if (updated > 0) this.log.info({ tools: updated }, 're-priced stored tools for the current formats');
    return updated;
  }
}
