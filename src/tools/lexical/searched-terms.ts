import { param, sql } from 'drizzle-orm';

import { type Executor, rowsOf } from '../../db/client.js';
import { postingVisibleTo, type Visibility } from '../access.js';
import { commonTermPostings, QUOTED_WORD_WEIGHT, type SearchedTerm, type TermCount } from './bm25f.js';

/** What choosing the searched lexemes needs of a discovery request (src/discovery/repository.ts, RetrievalRequest). */
interface SearchedTermsRequest {
  visibility: Visibility;
  /** Query text as the index sees it (identifiers already expanded). */
  text: string;
  /** The same without quoted values; absent: every word weighs fully. */
  intentText?: string;
  /** The caller's catalog statistics (CatalogStats): visible tools, held scope sets, and the memo of counts this fills. */
  stats: { visible: number; scopeSets: readonly number[]; termPostings: Map<string, TermCount> };
}

/** Most lexemes memoized per catalog-statistics entry (a bound on memory, not on correctness). */
const TERM_MEMO_ENTRIES = 4096;

/**
 * The query's lexemes (PostgreSQL's `english` tokenizer) that the lexical leg searches, with their
 * visible counts: those in fewer than `commonTermPostings` visible tools. Deciding reads up to that
 * many postings of each lexeme, most of the lexical leg's cost on a large catalog (a common word's
 * cap is 20% of it), so the counts are memoized on the catalog statistics, which belong to one
 * catalog revision: only lexemes new at this revision are counted, and the answer is the same as
 * counting them all. Frequent lexemes' counts are read from `term_counts` instead when a rebuild
 * at the tools' current revision stored them (term-counts.ts): reading them is what the cap made expensive. A
 * searched lexeme's counts are exact, so its IDF needs no further read. A lexeme found only in
 * the request's quoted values weighs QUOTED_WORD_WEIGHT.
 */
export async function searchedTerms(executor: Executor, request: SearchedTermsRequest): Promise<Map<string, SearchedTerm>> {
  const { stats } = request;
  const cap = commonTermPostings(stats.visible);
  const lexemesOf = (text: string) => sql`array(select distinct u.lexeme from unnest(to_tsvector('english', ${text})) u order by 1)`;
  const [row] = await rowsOf<{ lexemes: string[] | null; intent: string[] | null }>(
    executor.execute(sql`select ${lexemesOf(request.text)} as lexemes, ${request.intentText === undefined ? sql`null` : lexemesOf(request.intentText)} as intent`),
  );
  const lexemes = row?.lexemes ?? [];
  const intent = row?.intent ? new Set(row.intent) : undefined;
  const counts = new Map<string, TermCount>();
  const unknown = lexemes.filter((lexeme) => !stats.termPostings.has(lexeme));
  if (unknown.length > 0) {
    // Stored counts (migration 0016) when they belong to the postings this statement reads, capped as counting caps
    // them; every lexeme not stored there is counted from its postings (term-counts.ts stores
    // every frequent one).
    const held = postingVisibleTo(request.visibility, 'c', stats.scopeSets);
    const counted = await rowsOf<{ lexeme: string; postings: number; in_names: number }>(
      executor.execute(sql`
        with stored as (
          select c.lexeme, least(coalesce(sum(c.postings) filter (where ${held}), 0), ${sql.raw(String(cap))})::int as postings,
                 least(coalesce(sum(c.in_names) filter (where ${held}), 0), ${sql.raw(String(cap))})::int as in_names
          from term_counts c
          where c.tenant_id = ${request.visibility.tenantId} and c.lexeme = any(${param(unknown)}::text[])
            and exists (select 1 from term_count_revisions r join catalog_revisions current using (tenant_id)
                      where r.tenant_id = ${request.visibility.tenantId} and r.revision = current.tools_revision)
          group by c.lexeme
        )
        select lexeme, postings, in_names from stored
        union all
        select u.lexeme, probe.postings::int, probe.in_names::int
        from (select lexeme from unnest(${param(unknown)}::text[]) l(lexeme) where lexeme not in (select lexeme from stored)) u
        cross join lateral (
          select count(*) as postings, count(*) filter (where capped.tf_a > 0) as in_names from (
            select posting.tf_a from tool_terms posting
            where ${postingVisibleTo(request.visibility, 'posting', stats.scopeSets)} and posting.lexeme = u.lexeme
            limit ${sql.raw(String(cap))}
          ) capped
        ) probe`),
    );
    for (const r of counted) counts.set(r.lexeme, { postings: Number(r.postings), inNames: Number(r.in_names) });
    for (const [lexeme, count] of counts) if (stats.termPostings.size < TERM_MEMO_ENTRIES) stats.termPostings.set(lexeme, count);
  }
  const searched = new Map<string, SearchedTerm>();
  for (const lexeme of lexemes) {
    const count = stats.termPostings.get(lexeme) ?? counts.get(lexeme) ?? { postings: 0, inNames: 0 };
    if (count.postings < cap) searched.set(lexeme, { ...count, queryWeight: !intent || intent.has(lexeme) ? 1 : QUOTED_WORD_WEIGHT });
  }
  return searched;
}
