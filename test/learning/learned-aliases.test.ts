import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildApp } from '../../src/app.js';
import { LocalEmbedder } from '../../src/embedding/local.js';
import type { DiscoverResponse } from '../discovery/helpers.js';
import { call, testConfig, testDependencies } from '../helpers/app.js';
import { databaseLegs, type TestDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token } from '../helpers/tokens.js';

// [name, description, side effects]: aliases of side-effecting tools rank only once a publisher approves them.
const CATALOG: [string, string, boolean][] = [
  ['reconcile_ledger', 'Match general ledger entries against bank statement lines and flag differences.', false],
  ['issue_refund', 'Refund a paid invoice in full or in part.', true],
  ['send_email', 'Send an email message to a recipient.', true],
  ['create_customer', 'Create a customer record in the CRM.', true],
  ['restart_service', 'Restart a service deployment in the cluster.', true],
  ['search_tickets', 'Search support tickets by status or customer.', false],
  ['export_report', 'Export a sales report as a CSV file.', false],
  ['track_freight', 'Track a freight shipment and report its location.', false],
];

// Each missed request is made and then called by three different users of the tenant (the default
// LEARNED_ALIAS_MIN_SUBJECTS): one user alone, however often, teaches nothing.
const USERS = ['user-1', 'user-2', 'user-3'];

// Jargon the cards do not contain: what agents asked, the tool they then called, and paraphrases.
const CASES = [
  { missed: 'do the month-end close', tool: 'reconcile_ledger', paraphrases: ['please run the month end close for April', 'time for the month-end close again'] },
  { missed: 'kick the checkout pods', tool: 'restart_service', paraphrases: ['kick the checkout pods again please', 'can you kick the search pods'] },
];

/**
 * Learning from calls, with the real sentence encoder on PGlite in-process: misses become learned
 * aliases that later paraphrases match, tenant by tenant.
 */
describe('learned aliases (local encoder, PGlite in-process)', () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  const tokens: Record<string, { publisher: string; agent: string; users: string[] }> = {};

  beforeAll(async () => {
    database = await databaseLegs()[0]!.open();
    app = await buildApp({ ...testDependencies(testConfig(), database.database), embedder: await LocalEmbedder.load() });
    await app.ready();
    for (const tenant of ['learner', 'bystander']) {
      tokens[tenant] = {
        publisher: await token({ tenant, scopes: [PUBLISH] }),
        agent: await token({ tenant, scopes: [], sub: `agent-${tenant}` }),
        users: await Promise.all(USERS.map((sub) => token({ tenant, scopes: [], sub }))),
      };
      for (const [name, description, sideEffects] of CATALOG) {
        const doc = toolDocument({ name, description, summary: undefined, aliases: [], examples: [], tags: [], category: undefined, not_for: undefined, required_scopes: [], policy: undefined, side_effects: sideEffects });
        expect((await call(app, 'POST', '/v1/tools', { token: tokens[tenant]!.publisher, body: doc })).statusCode).toBe(201);
      }
    }
    await app.indexer?.flush();
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const discover = async (tenant: string, query: string, as = tokens[tenant]!.agent) => {
    const response = await call(app, 'POST', '/v1/discover', { token: as, body: { query, top_k: 3 } });
    return response.json<DiscoverResponse>();
  };
  type Alias = { id: number; query: string; misses: number; support: number; active: boolean; review: string; taught_by: { subject: string }[] };
  const learnedOf = async (tool: string) =>
    (await call(app, 'GET', `/v1/tools/${tool}/learned-aliases`, { token: tokens.learner!.publisher })).json<{ learned_aliases: Alias[] }>().learned_aliases;
  const recallAt3 = async (tenant: string) => {
    let hits = 0;
    let total = 0;
    for (const c of CASES) {
      for (const p of c.paraphrases) {
        total += 1;
        if ((await discover(tenant, p)).tools.some((t) => t.name === c.tool)) hits += 1;
      }
    }
    return hits / total;
  };

  const miss = async (tenant: string, c: (typeof CASES)[number], as: string) => {
    const offered = await discover(tenant, c.missed, as);
    expect(offered.tools.map((t) => t.name)).not.toContain(c.tool);
    const decision = await call(app, 'POST', '/v1/authorize', {
      token: as,
      body: { tool: c.tool, arguments: { invoice_id: 'x' }, discovery_id: offered.discovery_id },
    });
    expect(decision.json().decision).toBe('allow');
  };

  it('turns misses by three users into aliases that paraphrases find (after approval for side-effecting tools), in that tenant only', async () => {
    const before = await recallAt3('learner');
    // One user, however often, teaches nothing.
    const [first, ...others] = tokens.learner!.users;
    for (const c of CASES) for (let i = 0; i < 3; i += 1) await miss('learner', c, first!);
    await app.indexer?.flush();
    const oneUser = await recallAt3('learner');
    for (const c of CASES) for (const user of others) await miss('learner', c, user);
    await app.indexer?.flush();
    const threeUsers = await recallAt3('learner');
    // restart_service has side effects: its alias waits for a publisher's approval.
    const pending = (await learnedOf('restart_service')).find((a) => a.query === 'kick the checkout pods')!;
    expect(pending).toMatchObject({ misses: 5, support: 3, active: false, review: 'pending' });
    const approved = await call(app, 'POST', `/v1/tools/restart_service/learned-aliases/${pending.id}/approve`, { token: tokens.learner!.publisher });
    expect(approved.json().learned_alias).toMatchObject({ active: true, review: 'approved' });
    await app.indexer?.flush();
    const after = await recallAt3('learner');
    // The figure reported in the closing note: recall@3 of the paraphrases before and after.
    console.info(
      `learned-alias paraphrase recall@3: before ${before.toFixed(2)}, one user x3 ${oneUser.toFixed(2)}, ` +
        `three users ${threeUsers.toFixed(2)} (side-effecting tool pending), after approval ${after.toFixed(2)}`,
    );
    expect(before).toBeLessThanOrEqual(0.25);
    expect(oneUser).toBe(before);
    expect(threeUsers).toBeGreaterThanOrEqual(0.5);
    expect(after).toBe(1);
    expect(await recallAt3('bystander')).toBe(before);
  });

  it('shows learned aliases to publishers only, and lets them remove one', async () => {
    const asPublisher = await call(app, 'GET', '/v1/tools/reconcile_ledger', { token: tokens.learner!.publisher });
    const learned = asPublisher.json<{ learned_aliases: Alias[] }>().learned_aliases;
    expect(learned).toEqual([expect.objectContaining({ query: 'do the month-end close', misses: 5, support: 3, active: true, review: 'not_required' })]);
    expect(learned[0]!.taught_by.map((t) => t.subject).sort()).toEqual(USERS);
    const asAgent = await call(app, 'GET', '/v1/tools/reconcile_ledger', { token: tokens.learner!.agent });
    expect(asAgent.json()).not.toHaveProperty('learned_aliases');
    const bystander = await call(app, 'GET', '/v1/tools/reconcile_ledger', { token: tokens.bystander!.publisher });
    expect(bystander.json().learned_aliases).toEqual([]);

    const removed = await call(app, 'DELETE', `/v1/tools/reconcile_ledger/learned-aliases/${learned[0]!.id}`, { token: tokens.learner!.publisher });
    expect(removed.statusCode).toBe(204);
    expect((await call(app, 'DELETE', `/v1/tools/reconcile_ledger/learned-aliases/${learned[0]!.id}`, { token: tokens.learner!.publisher })).statusCode).toBe(404);
    expect((await call(app, 'GET', '/v1/tools/reconcile_ledger/learned-aliases', { token: tokens.learner!.agent })).statusCode).toBe(403);
  });

  it('reports missed tools and discoveries that ended in no call', async () => {
    const report = await call(app, 'GET', '/v1/reports/misses', { token: tokens.learner!.publisher });
    expect(report.statusCode).toBe(200);
    expect(report.json().missed_tools.map((t: { name: string }) => t.name)).toContain('restart_service');
    const bystander = await call(app, 'GET', '/v1/reports/misses', { token: tokens.bystander!.publisher });
    expect(bystander.json().missed_tools).toEqual([]);
  });
});
