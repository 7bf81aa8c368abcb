import { sql } from 'drizzle-orm';
import { beforeAll, describe, expect, it, vi } from 'vitest';

import { rowsOf } from '../../src/db/client.js';
import { catalogStats } from '../../src/discovery/repository.js';
import { searchedTerms } from '../../src/tools/lexical/searched-terms.js';
import { TermCountRefresh } from '../../src/tools/lexical/term-counts.js';
import { ToolService } from '../../src/tools/service.js';
import { ToolValidator } from '../../src/tools/validation.js';
import { testConfig } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, uniqueTenant } from '../helpers/tokens.js';

const quiet = { debug: () => undefined, warn: () => undefined };
const GAUGE = ['gauges:read'];
const VALVE = ['valves:write'];
const QUERY = 'calibrate the pressure gauge and open the valve, zorblax mode';

forEachDatabase((db) => {
  describe('stored term counts (migration 0016)', () => {
    const tenant = uniqueTenant('term-counts');
    const small = uniqueTenant('term-counts-small');
    const callers = [GAUGE, VALVE, [...GAUGE, ...VALVE], []];
    const executor = () => db.database.db;
    const register = async (tenantId: string, name: string, description: string, scopes: string[]) => {
      const checked = new ToolValidator(testConfig().limits).validate(toolDocument({ name, description, summary: undefined, required_scopes: scopes }));
      if (!checked.ok) throw new Error(JSON.stringify(checked.issues));
      await new ToolService(executor()).register({ tenant: tenantId, subject: 'ci', scopes: [PUBLISH] }, checked.document);
    };
    /** Every lexeme of QUERY with its counts, as one caller's discovery sees them at the current revision. */
    const counts = async (scopes: string[]) => {
      const stats = await catalogStats(executor(), tenant, scopes);
      await searchedTerms(executor(), { visibility: { tenantId: tenant, scopes, includeRetired: false }, text: QUERY, stats });
      return Object.fromEntries([...stats.termPostings].sort(([a], [b]) => a.localeCompare(b)));
    };
    const storedRevision = async (tenantId: string) =>
      (await rowsOf<{ revision: number }>(executor().execute(sql`select revision::float8 as revision from term_count_revisions where tenant_id = ${tenantId}`)))[0]?.revision;
    const currentRevision = async (tenantId: string) =>
      (await rowsOf<{ revision: number }>(executor().execute(sql`select tools_revision::float8 as revision from catalog_revisions where tenant_id = ${tenantId}`)))[0]?.revision;

    beforeAll(async () => {
      for (let i = 0; i < 12; i += 1) {
        await register(tenant, `read_gauge_${i}`, `Read pressure gauge ${i}.${i % 3 === 0 ? ' Calibrate it first.' : ''}`, GAUGE);
        await register(tenant, `open_valve_${i}`, `Open valve ${i} of the pressure line.${i % 4 === 0 ? ' Zorblax mode.' : ''}`, VALVE);
      }
      await register(small, 'read_gauge', 'Read a pressure gauge.', GAUGE);
    }, 60_000);

    it('rebuilds a tenant once its revision settles; discovery then reads the stored counts, equal to counting', async () => {
      const counted = await Promise.all(callers.map(counts));
      const refresh = new TermCountRefresh(executor(), quiet, { minTools: 0, minPostings: 4 });
      expect(await refresh.runOnce()).not.toContain(tenant); // first seen: a burst may still be going on
      expect(await refresh.runOnce()).toContain(tenant);
      expect(await storedRevision(tenant)).toBe(await currentRevision(tenant));
      expect(await refresh.runOnce()).not.toContain(tenant); // current: nothing to do

      const rows = await rowsOf<{ lexeme: string; scopes: string[]; postings: number; in_names: number }>(
        executor().execute(sql`select c.lexeme, s.scopes, c.postings, c.in_names from term_counts c join scope_sets s on s.id = c.scope_set
                               where c.tenant_id = ${tenant} and c.lexeme in ('pressur', 'calibr', 'zorblax', 'gaug') order by 1, 2`),
      );
      // Frequent lexemes, with a row for each scope set they occur in; "zorblax" (3 tools) is counted instead.
      expect(rows).toEqual([
        { lexeme: 'calibr', scopes: GAUGE, postings: 4, in_names: 0 },
        { lexeme: 'gaug', scopes: GAUGE, postings: 12, in_names: 12 },
        { lexeme: 'pressur', scopes: GAUGE, postings: 12, in_names: 0 },
        { lexeme: 'pressur', scopes: VALVE, postings: 12, in_names: 0 },
      ]);
      // Same counts for every caller, stored or counted.
      expect(await Promise.all(callers.map(counts))).toEqual(counted);

      // Vectors bump the catalog revision, not the tools': the stored counts stay current.
      await executor().execute(sql`
        insert into tool_embeddings (tool_id, tenant_id, model, ord, dims, content_hash, embedding)
        select id, tenant_id, 'term-counts-8', 0, 8, '', array_fill(0.5, array[8])::vector from tools where tenant_id = ${tenant}`);
      expect(await refresh.runOnce()).not.toContain(tenant);
      expect(await refresh.runOnce()).not.toContain(tenant);
      // They are read: a wrong stored count shows (and is put back).
      await executor().execute(sql`update term_counts set postings = postings + 100 where tenant_id = ${tenant} and lexeme = 'pressur'`);
      expect((await counts(GAUGE)).pressur).toEqual({ postings: 112, inNames: 0 });
      await executor().execute(sql`update term_counts set postings = postings - 100 where tenant_id = ${tenant} and lexeme = 'pressur'`);
      expect((await counts(GAUGE)).pressur).toEqual({ postings: 12, inNames: 0 });
    });

    it('ignores the stored counts of an older revision until the next rebuild', async () => {
      const refresh = new TermCountRefresh(executor(), quiet, { minTools: 0, minPostings: 4 });
      await refresh.runOnce();
      await refresh.runOnce();
      const stored = await storedRevision(tenant);
      await register(tenant, 'read_gauge_extra', 'Read the spare pressure gauge.', GAUGE);
      expect(await currentRevision(tenant)).toBeGreaterThan(stored!);
      // Stale rows say 12; counting says 13.
      expect((await counts(GAUGE)).pressur).toEqual({ postings: 13, inNames: 0 });
      expect(await refresh.runOnce()).not.toContain(tenant);
      expect(await refresh.runOnce()).toContain(tenant);
      expect(await storedRevision(tenant)).toBe(await currentRevision(tenant));
      const [row] = await rowsOf<{ postings: number }>(
        executor().execute(sql`select sum(postings)::int as postings from term_counts where tenant_id = ${tenant} and lexeme = 'pressur'`),
      );
      expect(row?.postings).toBe(25);
      expect((await counts(GAUGE)).pressur).toEqual({ postings: 13, inNames: 0 });
    });

    it('stores no counts for a tenant under the size floor, only its revision', async () => {
      await register(small, 'read_gauge_twice', 'Read a pressure gauge twice.', GAUGE);
      const refresh = new TermCountRefresh(executor(), quiet);
      expect(await refresh.runOnce()).not.toContain(small);
      expect(await refresh.runOnce()).toContain(small);
      expect(await storedRevision(small)).toBe(await currentRevision(small));
      const [row] = await rowsOf<{ n: number }>(executor().execute(sql`select count(*)::int as n from term_counts where tenant_id = ${small}`));
      expect(row?.n).toBe(0);
    });

    it("goes on to the other tenants when one tenant's rebuild fails, and says so", async () => {
      const failing = uniqueTenant('term-counts-failing');
      await register(failing, 'read_gauge', 'Read a pressure gauge.', GAUGE);
      await register(small, 'read_gauge_thrice', 'Read a pressure gauge three times.', GAUGE);
      const warned: unknown[] = [];
      const refresh = new TermCountRefresh(executor(), { debug: () => undefined, warn: (context: unknown) => void warned.push(context) });
      const rebuild = (refresh as unknown as { rebuild(tenant: string): Promise<boolean> }).rebuild.bind(refresh);
      vi.spyOn(refresh as unknown as { rebuild(tenant: string): Promise<boolean> }, 'rebuild').mockImplementation(async (tenantId) => {
        if (tenantId === failing) throw new Error('canceling statement due to statement timeout');
        return rebuild(tenantId);
      });
      await refresh.runOnce();
      const rebuilt = await refresh.runOnce();
      expect(rebuilt).toContain(small);
      expect(rebuilt).not.toContain(failing);
      expect(warned).toEqual([expect.objectContaining({ tenant: failing })]);
    });
  });
});
