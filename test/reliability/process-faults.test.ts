import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { toolDocument } from '../helpers/fixtures.js';
import { exited, freePort, startServer } from '../helpers/server-process.js';
import { PUBLISH, token } from '../helpers/tokens.js';

/**
 * The real process (`node --import tsx src/cli/index.ts serve`) on an embedded DATA_DIR: killed with
 * SIGKILL in the middle of a batch of registrations, restarted on the same directory, and stopped
 * with SIGTERM while a request is still being received.
 */
describe('process faults (real server, embedded PGlite in DATA_DIR)', () => {
  let dataDir: string;
  let port: number;
  let publisher: string;
  const names = Array.from({ length: 60 }, (_, i) => `batch_tool_${i}`);

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'registry-kill-'));
    port = await freePort();
    publisher = await token({ tenant: 'killed', scopes: [PUBLISH], exp: '1h' });
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('leaves every tool of a batch either fully registered or absent after SIGKILL', async () => {
    const server = await startServer(dataDir, port);
    const base = `http://127.0.0.1:${port}`;
    let acknowledged = 0;
    const post = async (name: string) => {
      try {
        const res = await fetch(`${base}/v1/tools`, {
          method: 'POST',
          headers: { authorization: `Bearer ${publisher}`, 'content-type': 'application/json' },
          body: JSON.stringify(toolDocument({ name, description: `Batch tool ${name} refunds invoices.` })),
        });
        if (res.status === 201) acknowledged += 1;
        return res.status;
      } catch {
        return 0; // the connection died with the process
      }
    };
    // Four writers in parallel; the process dies once some registrations are acknowledged.
    const queue = [...names];
    const writers = Array.from({ length: 4 }, async () => {
      for (let name = queue.shift(); name; name = queue.shift()) await post(name);
    });
    while (acknowledged < 10) await new Promise((resolve) => setTimeout(resolve, 5));
    server.kill('SIGKILL');
    await exited(server);
    await Promise.all(writers);
    expect(acknowledged).toBeGreaterThanOrEqual(10);

    // Restart on the same DATA_DIR: the database opens, and everything acknowledged is there.
    const again = await startServer(dataDir, port);
    const present: string[] = [];
    for (const name of names) {
      const res = await fetch(`${base}/v1/tools/${name}`, { headers: { authorization: `Bearer ${publisher}` } });
      expect([200, 404]).toContain(res.status);
      if (res.status === 200) present.push(name);
    }
    expect(present.length).toBeGreaterThanOrEqual(acknowledged);
    again.kill('SIGTERM');
    expect((await exited(again)).code).toBe(0);

    // Row-level check on the files: every tool has its version, postings and audit entry.
    const pglite = await PGlite.create({ dataDir, extensions: { vector } });
    try {
      const { rows } = await pglite.query<{ name: string; versions: number; terms: number; audit: number }>(`
        select t.name,
               (select count(*)::int from tool_versions v where v.tool_id = t.id) as versions,
               (select count(*)::int from tool_terms p where p.tool_id = t.id) as terms,
               (select count(*)::int from audit_log a where a.tenant_id = t.tenant_id and a.tool_name = t.name and a.action = 'publish') as audit
        from tools t where t.tenant_id = 'killed' order by t.name`);
      expect(rows.map((r) => r.name).sort()).toEqual([...present].sort());
      for (const row of rows) expect(row, row.name).toMatchObject({ versions: 1, terms: expect.any(Number), audit: 1 });
      for (const row of rows) expect(row.terms, row.name).toBeGreaterThan(0);
      const orphans = await pglite.query<{ n: number }>(`select count(*)::int as n from tool_versions v where v.tenant_id = 'killed' and not exists (select 1 from tools t where t.id = v.tool_id)`);
      expect(orphans.rows[0]!.n).toBe(0);
    } finally {
      await pglite.close();
    }
  }, 120_000);

  it('completes a request still being received when SIGTERM arrives, then exits 0', async () => {
    const server = await startServer(dataDir, port);
    const body = JSON.stringify(toolDocument({ name: 'slow_upload', description: `Slow upload ${'x'.repeat(2000)}.`.slice(0, 1000) }));
    const half = Math.floor(body.length / 2);
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, method: 'POST', path: '/v1/tools', headers: { authorization: `Bearer ${publisher}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, half));
      setTimeout(() => {
        server.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(half)), 500);
      }, 300);
    });
    const result = await response;
    expect(result.status, result.body).toBe(201);
    expect((await exited(server)).code).toBe(0);
    // New connections are refused once it is gone.
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  }, 120_000);
});
