import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';

import { type Principal,PUBLISH_SCOPE } from '../../src/auth/principal.js';
import { rowsOf } from '../../src/db/client.js';
import { tools } from '../../src/db/schema.js';
import { canSee, heldScopeSets, holdsScopes, isVisible, mayUse, missingScopes, postingVisibleTo, seenBy, usableBy, type Visibility, visibleTo } from '../../src/tools/access.js';
import { refreshTerms } from '../../src/tools/lexical/postings.js';
import { insertTool } from '../../src/tools/repository.js';
import { forEachDatabase } from '../helpers/databases.js';

// The access rule has two forms (SQL for queries, in process for a row already read); this table
// runs every case through both, so they cannot drift apart.
const TENANT = 'acme';
const caller = (scopes: string[], tenant = TENANT): Principal => ({ tenant, subject: 'u', scopes });

interface Row {
  key: string;
  tenantId: string;
  status: 'active' | 'retired';
  requiredScopes: string[];
}
const ROWS: Row[] = [
  { key: 'open', tenantId: TENANT, status: 'active', requiredScopes: [] },
  { key: 'billing', tenantId: TENANT, status: 'active', requiredScopes: ['billing:read'] },
  { key: 'billing-admin', tenantId: TENANT, status: 'active', requiredScopes: ['billing:admin', 'billing:read'] },
  { key: 'retired-open', tenantId: TENANT, status: 'retired', requiredScopes: [] },
  { key: 'retired-billing', tenantId: TENANT, status: 'retired', requiredScopes: ['billing:read'] },
  { key: 'other-tenant', tenantId: 'globex', status: 'active', requiredScopes: [] },
];

interface Case {
  name: string;
  principal: Principal;
  /** What GET/list /v1/tools shows (retired included for publishers). */
  sees: string[];
  /** What discovery, describe_tool and authorize may use. */
  uses: string[];
}
const CASES: Case[] = [
  { name: 'a caller without scopes', principal: caller([]), sees: ['open'], uses: ['open'] },
  { name: 'a caller with one of two scopes', principal: caller(['billing:read']), sees: ['open', 'billing'], uses: ['open', 'billing'] },
  { name: 'a caller with every scope', principal: caller(['billing:admin', 'billing:read', 'x']), sees: ['open', 'billing', 'billing-admin'], uses: ['open', 'billing', 'billing-admin'] },
  { name: 'a scope that only looks alike', principal: caller(['BILLING:READ', 'billing']), sees: ['open'], uses: ['open'] },
  {
    name: 'a publisher (whole tenant to manage, its scopes to use)',
    principal: caller([PUBLISH_SCOPE]),
    sees: ['open', 'billing', 'billing-admin', 'retired-open', 'retired-billing'],
    uses: ['open'],
  },
  { name: 'a caller of another tenant', principal: caller(['billing:admin', 'billing:read'], 'globex'), sees: ['other-tenant'], uses: ['other-tenant'] },
  { name: 'a publisher of another tenant', principal: caller([PUBLISH_SCOPE], 'initech'), sees: [], uses: [] },
];

const keysWhere = (test: (row: Row) => boolean) => ROWS.filter(test).map((row) => row.key).sort();

describe('the access rule, in process', () => {
  it.each(CASES)('$name', ({ principal, sees, uses }) => {
    expect(keysWhere((row) => canSee(principal, row))).toEqual([...sees].sort());
    expect(keysWhere((row) => mayUse(principal, row))).toEqual([...uses].sort());
  });

  it('holds scopes as a subset, and names the missing ones', () => {
    expect(holdsScopes([], [])).toBe(true);
    expect(holdsScopes(['a', 'b'], ['b', 'a'])).toBe(true);
    expect(holdsScopes(['a'], ['a', 'b'])).toBe(false);
    expect(missingScopes(['a'], ['a', 'b', 'c'])).toEqual(['b', 'c']);
  });

  it('lists retired tools only for a publisher who asks', () => {
    const publisher = caller([PUBLISH_SCOPE]);
    expect(seenBy(publisher, false).includeRetired).toBe(false);
    expect(seenBy(caller([]), true).includeRetired).toBe(false);
    expect(isVisible(seenBy(publisher, false), ROWS[3]!)).toBe(false);
  });
});

forEachDatabase((db) => {
  describe('the access rule, in SQL, agrees with the in-process rule', () => {
    const ids = new Map<number, string>();

    const seed = async () => {
      if (ids.size > 0) return;
      const executor = db.database.db;
      for (const row of ROWS) {
        const inserted = await insertTool(executor, {
          tenantId: row.tenantId, name: row.key.replaceAll('-', '_'), version: '1.0.0', revision: 1, status: row.status,
          summary: 'frobnicate', description: 'Frobnicate the widget.', aliases: [], examples: [], tags: [], requiredScopes: row.requiredScopes,
          sensitivity: 'low', sideEffects: false, document: {}, contentHash: row.key, tokenCosts: {},
          searchName: row.key, searchCard: 'frobnicate widget', searchBody: '', searchParams: '',
        });
        await refreshTerms(executor, inserted.id);
        ids.set(inserted.id, row.key);
      }
    };
    const keysOf = (found: { id: number | string }[]) => found.map((r) => ids.get(Number(r.id))!).sort();
    const selectVisible = async (visibility: Visibility) =>
      keysOf(await db.database.db.select({ id: tools.id }).from(tools).where(visibleTo(visibility)));
    const selectPostings = async (visibility: Visibility, scopes: readonly string[]) => {
      const [held] = await rowsOf<{ ids: unknown[] }>(db.database.db.execute(sql`select ${heldScopeSets(visibility.tenantId, scopes)} as ids`));
      const scopeSets = (held?.ids ?? []).map(Number);
      return keysOf(await rowsOf<{ id: number }>(db.database.db.execute(sql`select distinct posting.tool_id as id from tool_terms posting where ${postingVisibleTo(visibility, 'posting', scopeSets)}`)));
    };

    it.each(CASES)('$name', async ({ principal, sees, uses }) => {
      await seed();
      expect(await selectVisible(seenBy(principal, true))).toEqual([...sees].sort());
      expect(await selectVisible(usableBy(principal))).toEqual([...uses].sort());
      // The lexical leg reads postings, not tools: the same answer through the scope-set numbers.
      expect(await selectPostings(usableBy(principal), principal.scopes)).toEqual([...uses].sort());
    });
  });
});
