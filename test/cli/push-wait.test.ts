import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { useDiscoveryApp } from '../discovery/helpers.js';
import { forEachDatabase } from '../helpers/databases.js';
import { FlakyEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { cli } from './run-cli.js';

/** `push --wait` against a listening app with a real indexer (a flaky embedder), on every leg. */
forEachDatabase((db) => {
  describe('tool-registry push --wait', () => {
    const embedder = new FlakyEmbedder();
    const ctx = useDiscoveryApp(db, () => embedder);
    let url: string;
    let dir: string;
    beforeAll(async () => {
      await ctx.app.listen({ host: '127.0.0.1', port: 0 });
      url = `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`;
      dir = mkdtempSync(join(tmpdir(), 'registry-wait-'));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('exits 5 when a pushed tool cannot be indexed, 0 once it is, with index_status in the JSON', async () => {
      const tenant = uniqueTenant();
      const env = { REGISTRY_URL: url, REGISTRY_TOKEN: await token({ tenant, scopes: [PUBLISH] }) };
      const file = join(dir, `${tenant}.json`);
      writeFileSync(file, JSON.stringify(toolDocument()));
      embedder.healthy = false;
      const failing = await cli(['push', '--wait', '--wait-timeout', '3', '--json', file], env);
      expect(failing.code).toBe(5);
      const report = JSON.parse(failing.stdout) as { outcomes: { action: string; index_status: string }[] };
      expect(report.outcomes[0]).toMatchObject({ action: 'created' });
      expect(['failed', 'pending']).toContain(report.outcomes[0]!.index_status);

      embedder.healthy = true;
      writeFileSync(file, JSON.stringify(toolDocument({ version: '1.1.0', description: 'Refund a paid invoice, fully or partly.' })));
      const ok = await cli(['push', '--wait', '--wait-timeout', '30', file], env);
      expect(ok.code, ok.stdout + ok.stderr).toBe(0);
      expect(ok.stdout).toMatch(/issue_refund\s+1\.1\.0\s+updated\s+indexed/);
    }, 60_000);
  });
});
