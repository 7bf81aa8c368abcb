import { beforeAll, describe, expect, it } from 'vitest';

import type { Database } from '../../src/db/client.js';
import { rowsOf } from '../../src/db/client.js';
import { buildTestApp, call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

/** A revision's content: version n carries `marker_n` in its schema and "revision n" in its description. */
const revision = (n: number) =>
  toolDocument({
    version: `1.${n}.0`,
    description: `Refund a paid invoice, revision ${n}.`,
    parameters: { type: 'object', properties: { [`marker_${n}`]: { type: 'string', description: `marker ${n}` } } },
  });

async function history(database: Database, tenant: string): Promise<number[]> {
  const rows = await rowsOf<{ revision: number }>(database.db.execute(`select revision from tool_versions where tenant_id = '${tenant}' order by revision`));
  return rows.map((r) => Number(r.revision));
}

/**
 * Concurrency on every database leg. The socket leg is the interesting one: a pg pool with several
 * connections races real transactions (the in-process leg serializes them in one connection).
 * On the socket leg a second app with its own pool plays a second replica.
 */
forEachDatabase((db) => {
  describe('concurrent writes', () => {
    // A second replica's own pool on the wire legs.
    let replicaDatabase: Database | undefined;
    beforeAll(async () => {
      if (db.leg !== 'pglite') replicaDatabase = await db.current.connect();
    });
    const apps = async () => {
      const first = await buildTestApp({ database: db.database });
      const second = replicaDatabase ? await buildTestApp({ database: replicaDatabase }) : first;
      return { apps: [first, second], close: async () => Promise.all([...new Set([first, second])].map((a) => a.close())) };
    };

    it('50 PUTs with the same If-Match: exactly one 200, 49 × 412, history without gaps', async () => {
      const { apps: [a, b], close } = await apps();
      try {
        const tenant = uniqueTenant('race');
        const tk = await token({ tenant, scopes: [PUBLISH] });
        const created = await call(a!, 'POST', '/v1/tools', { token: tk, body: revision(0) });
        expect(created.statusCode).toBe(201);
        const headers = { 'if-match': created.headers.etag as string };
        const responses = await Promise.all(
          Array.from({ length: 50 }, (_, i) => call(i % 2 ? b! : a!, 'PUT', '/v1/tools/issue_refund', { token: tk, body: revision(i + 1), headers })),
        );
        const statuses = responses.map((r) => r.statusCode);
        expect(statuses.filter((s) => s === 200)).toHaveLength(1);
        expect(statuses.filter((s) => s === 412)).toHaveLength(49);
        expect(await history(db.database, tenant)).toEqual([1, 2]);
        const winner = responses.find((r) => r.statusCode === 200)!.json() as { version: string; parameters: { properties: Record<string, unknown> } };
        const current = (await call(a!, 'GET', '/v1/tools/issue_refund', { token: tk })).json() as typeof winner;
        expect(current.version).toBe(winner.version);
        expect(Object.keys(current.parameters.properties)).toEqual([`marker_${winner.version.split('.')[1]}`]);
      } finally {
        await close();
      }
    });

    it('50 unconditional PUTs in sequence-free order: every accepted revision is recorded, numbered without gaps', async () => {
      const { apps: [a, b], close } = await apps();
      try {
        const tenant = uniqueTenant('race-free');
        const tk = await token({ tenant, scopes: [PUBLISH] });
        expect((await call(a!, 'POST', '/v1/tools', { token: tk, body: revision(0) })).statusCode).toBe(201);
        const responses = await Promise.all(Array.from({ length: 50 }, (_, i) => call(i % 2 ? b! : a!, 'PUT', '/v1/tools/issue_refund', { token: tk, body: revision(i + 1) })));
        // A lower semver arriving after a higher one is a 409: never a 500, never a lost write.
        for (const r of responses) expect([200, 409]).toContain(r.statusCode);
        const accepted = responses.filter((r) => r.statusCode === 200).length;
        expect(await history(db.database, tenant)).toEqual(Array.from({ length: accepted + 1 }, (_, i) => i + 1));
      } finally {
        await close();
      }
    });

    it('concurrent POSTs of one name: one 201, the rest 409, one tool row and one version', async () => {
      const { apps: [a, b], close } = await apps();
      try {
        const tenant = uniqueTenant('race-post');
        const tk = await token({ tenant, scopes: [PUBLISH] });
        const responses = await Promise.all(Array.from({ length: 20 }, (_, i) => call(i % 2 ? b! : a!, 'POST', '/v1/tools', { token: tk, body: revision(i) })));
        const statuses = responses.map((r) => r.statusCode);
        expect(statuses.filter((s) => s === 201)).toHaveLength(1);
        expect(statuses.filter((s) => s === 409)).toHaveLength(19);
        expect(await history(db.database, tenant)).toEqual([1]);
      } finally {
        await close();
      }
    });

    it('discover during concurrent updates never returns a half-written tool', async () => {
      const { apps: [a, b], close } = await apps();
      try {
        const tenant = uniqueTenant('race-read');
        const tk = await token({ tenant, scopes: [PUBLISH] });
        const reader = await token({ tenant });
        expect((await call(a!, 'POST', '/v1/tools', { token: tk, body: revision(0) })).statusCode).toBe(201);
        let writing = true;
        const writer = (async () => {
          for (let n = 1; n <= 25; n += 1) expect((await call(a!, 'PUT', '/v1/tools/issue_refund', { token: tk, body: revision(n) })).statusCode).toBe(200);
          writing = false;
        })();
        let reads = 0;
        const readers = Array.from({ length: db.leg === 'pglite' ? 3 : 1 }, async () => {
          while (writing) {
            const res = await call(b!, 'POST', '/v1/discover', { token: reader, body: { query: 'refund a paid invoice', format: 'raw', top_k: 1 } });
            expect(res.statusCode).toBe(200);
            for (const tool of res.json().tools as { version: string; card: { version: string }; schema: { description: string; parameters: { properties: Record<string, unknown> } } }[]) {
              const n = tool.version.split('.')[1];
              expect(tool.card.version).toBe(tool.version);
              // The rendered description is the stored one, then the tool's not_for guidance.
              expect(tool.schema.description.split('\n\n')[0]).toBe(`Refund a paid invoice, revision ${n}.`);
              expect(Object.keys(tool.schema.parameters.properties)).toEqual([`marker_${n}`]);
            }
            const got = await call(b!, 'GET', '/v1/tools/issue_refund', { token: reader });
            const view = got.json() as { version: string; description: string; parameters: { properties: Record<string, unknown> } };
            expect(Object.keys(view.parameters.properties)).toEqual([`marker_${view.version.split('.')[1]}`]);
            reads += 1;
          }
        });
        await Promise.all([writer, ...readers]);
        expect(reads).toBeGreaterThan(0);
      } finally {
        await close();
      }
    });
  });
});
