import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { useDiscoveryApp } from '../discovery/helpers.js';
import { forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { cli } from './run-cli.js';

interface Report {
  exit_code: number;
  source: string;
  outcomes: { name: string; action: string }[];
  index?: { indexed: number; pending: number };
}

/** `push --source` (catalog sync) against a listening app with a real indexer, on every leg. */
forEachDatabase((db) => {
  describe('tool-registry push --source', () => {
    const ctx = useDiscoveryApp(db, () => new HashingEmbedder());
    let env: Record<string, string>;
    let dir: string;
    let publisher: string;

    beforeAll(async () => {
      await ctx.app.listen({ host: '127.0.0.1', port: 0 });
      publisher = await token({ tenant: uniqueTenant('cli-sync'), scopes: [PUBLISH] });
      env = { REGISTRY_URL: `http://127.0.0.1:${(ctx.app.server.address() as AddressInfo).port}`, REGISTRY_TOKEN: publisher };
      dir = mkdtempSync(join(tmpdir(), 'registry-sync-'));
      mkdirSync(join(dir, 'tools'));
      writeFileSync(join(dir, 'tools', 'a.json'), JSON.stringify(toolDocument({ name: 'alpha_tool' })));
      writeFileSync(join(dir, 'tools', 'b.json'), JSON.stringify(toolDocument({ name: 'beta_tool' })));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    const status = async (name: string) => (await ctx.app.inject({ method: 'GET', url: `/v1/tools/${name}`, headers: { authorization: `Bearer ${publisher}` } })).json();

    it('prints the plan on --dry-run and stores nothing', async () => {
      const run = await cli(['push', '--source', 'svc', '--dry-run', join(dir, 'tools')], env);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/alpha_tool\s+1\.0\.0\s+would create/);
      expect(run.stdout).toMatch(/beta_tool\s+1\.0\.0\s+would create/);
      expect((await status('alpha_tool')).error.code).toBe('not_found');
    });

    it('syncs the folder and with --wait shows indexing progress until every vector is stored', async () => {
      const run = await cli(['push', '--source', 'svc', '--wait', '--wait-timeout', '30', join(dir, 'tools')], env);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      expect(run.stdout).toMatch(/alpha_tool\s+1\.0\.0\s+created/);
      expect(run.stderr).toMatch(/indexing: 2\/2 indexed, 0 pending, 0 failed · .* · done\n$/);
      expect(await status('alpha_tool')).toMatchObject({ source: 'svc', index_status: 'indexed' });
    });

    it('retires what the folder no longer declares with --prune, leaving the rest unchanged', async () => {
      rmSync(join(dir, 'tools', 'b.json'));
      const run = await cli(['push', '--source', 'svc', '--prune', '--json', join(dir, 'tools')], env);
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout) as Report;
      expect(report.outcomes).toEqual([
        expect.objectContaining({ name: 'alpha_tool', action: 'unchanged' }),
        expect.objectContaining({ name: 'beta_tool', action: 'retired' }),
      ]);
      expect((await status('beta_tool')).status).toBe('retired');
    });

    it('sends nothing when a document cannot be read (it would be pruned), and exits 1', async () => {
      writeFileSync(join(dir, 'tools', 'broken.json'), '{ not json');
      const run = await cli(['push', '--source', 'svc', '--prune', join(dir, 'tools')], env);
      rmSync(join(dir, 'tools', 'broken.json'));
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/nothing was synced/);
      expect((await status('alpha_tool')).status).toBe('active');
    });

    it('refuses --prune without --source (exit 2)', async () => {
      const run = await cli(['push', '--prune', join(dir, 'tools')], env);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/--prune needs --source/);
    });
  });
});
