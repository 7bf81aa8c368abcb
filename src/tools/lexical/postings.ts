import { sql } from 'drizzle-orm';

import type { Executor } from '../../db/client.js';
import { tools } from '../../db/schema.js';

/**
 * Rebuilds a tool's BM25 postings from its generated tsvector, so tokenizing and stemming stay
 * PostgreSQL's: one row per lexeme with its occurrence count per weight class, plus what the
 * lexical leg needs without reading the tool (field lengths, required scopes). Only active tools
 * have postings. Call it in the transaction of every change to the tool's text, scopes or status.
 */
export async function refreshTerms(executor: Executor, toolId: number): Promise<void> {
  await executor.execute(sql`delete from tool_terms where tool_id = ${toolId}`);
  // Number the tool's scope set first, in its own statement: ON CONFLICT waits for a concurrent
  // transaction numbering the same set, and the insert below then sees its committed row.
  await executor.execute(sql`
    insert into scope_sets (tenant_id, scopes)
    select tenant_id, required_scopes from ${tools} where id = ${toolId}
    on conflict (tenant_id, scopes) do nothing`);
  await executor.execute(sql`
    with terms as (
      select u.lexeme,
             coalesce(cardinality(array_positions(u.weights, 'A')), 0) as tf_a,
             coalesce(cardinality(array_positions(u.weights, 'B')), 0) as tf_b,
             coalesce(cardinality(array_positions(u.weights, 'C')), 0) as tf_c,
             coalesce(cardinality(array_positions(u.weights, 'D')), 0) as tf_d
      from ${tools} t, unnest(t.tsv) u
      where t.id = ${toolId}
    ),
    measured as (
      update ${tools} set
        len_a = coalesce((select sum(tf_a) from terms), 0),
        len_b = coalesce((select sum(tf_b) from terms), 0),
        len_c = coalesce((select sum(tf_c) from terms), 0),
        len_d = coalesce((select sum(tf_d) from terms), 0)
      where id = ${toolId}
      returning tenant_id, id, status, required_scopes, len_a, len_b, len_c, len_d
    )
    insert into tool_terms (tenant_id, lexeme, tool_id, tf_a, tf_b, tf_c, tf_d, scope_set, len_a, len_b, len_c, len_d)
    select m.tenant_id, terms.lexeme, m.id, terms.tf_a, terms.tf_b, terms.tf_c, terms.tf_d, s.id, m.len_a, m.len_b, m.len_c, m.len_d
    from terms, measured m
    join scope_sets s on s.tenant_id = m.tenant_id and s.scopes = m.required_scopes
    where m.status = 'active'`);
}
