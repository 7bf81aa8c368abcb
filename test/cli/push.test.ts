import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';

import { useLiveRegistry } from '../client/live-registry.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { uniqueTenant } from '../helpers/tokens.js';
import { cli } from './run-cli.js';

/** The rows of the push summary table: tool -> result. */
function results(stdout: string): Record<string, string> {
  const table = stdout.slice(0, stdout.indexOf('\n\n'));
  const rows = table.split('\n').slice(2).filter((line) => /^\S+\s+\S+\s+(created|updated|unchanged|failed|would)/.test(line));
  return Object.fromEntries(rows.map((line) => {
    const [name, , result, next] = line.split(/\s+/);
    return [name!, result === 'would' ? `would ${next}` : result!];
  }));
}

/** `push` through real HTTP against the app, on every database leg. */
forEachDatabase((db) => {
  const registry = useLiveRegistry(() => db.database);
  const push = (...args: string[]) => ['push', ...args];
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'registry-push-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe('tool-registry push', () => {
    it('creates, then skips everything unchanged, then PUTs only the modified file', async () => {
      const tenant = uniqueTenant();
      const env = { REGISTRY_URL: registry.url, REGISTRY_TOKEN: await registry.token(tenant) };
      const folder = join(dir, tenant);
      const { mkdirSync } = await import('node:fs');
      mkdirSync(join(folder, 'nested'), { recursive: true });
      writeFileSync(join(folder, 'refund.yaml'), stringify(toolDocument()));
      writeFileSync(join(folder, 'nested', 'two.json'), JSON.stringify([toolDocument({ name: 'get_invoice', side_effects: false, summary: undefined }), toolDocument({ name: 'void_invoice' })]));
      writeFileSync(join(folder, 'README.md'), 'not a tool');

      const first = await cli(push(folder), env);
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      expect(results(first.stdout)).toEqual({ get_invoice: 'created', void_invoice: 'created', issue_refund: 'created' });
      expect(first.stdout).toMatch(/3 documents: created 3, updated 0, unchanged 0, failed 0/);

      const second = await cli(push(folder), env);
      expect(second.code).toBe(0);
      expect(results(second.stdout)).toEqual({ get_invoice: 'unchanged', void_invoice: 'unchanged', issue_refund: 'unchanged' });
      const client = await registry.client(tenant);
      expect((await client.getTool('get_invoice')).tool.revision).toBe(1);

      writeFileSync(join(folder, 'refund.yaml'), stringify(toolDocument({ version: '1.1.0', aliases: ['give money back', 'refund my purchase', 'reimburse me'] })));
      const dry = await cli(push('--dry-run', folder), env);
      expect(results(dry.stdout).issue_refund).toBe('would update');
      expect(dry.stdout).toMatch(/1\.0\.0 -> 1\.1\.0 \(aliases, version\)/);
      expect((await client.getTool('issue_refund')).tool.version).toBe('1.0.0');

      const third = await cli(push(folder), env);
      expect(third.code).toBe(0);
      expect(results(third.stdout)).toEqual({ get_invoice: 'unchanged', void_invoice: 'unchanged', issue_refund: 'updated' });
      expect((await client.getTool('issue_refund')).tool).toMatchObject({ version: '1.1.0', revision: 2 });
    });

    it('exits 1 and reports every failure: invalid documents, unbumped versions, duplicates, unreadable files', async () => {
      const tenant = uniqueTenant();
      const env = { REGISTRY_URL: registry.url, REGISTRY_TOKEN: await registry.token(tenant) };
      const folder = join(dir, tenant);
      const { mkdirSync } = await import('node:fs');
      mkdirSync(folder);
      writeFileSync(join(folder, 'a.yaml'), stringify(toolDocument()));
      expect((await cli(push(folder), env)).code).toBe(0);

      writeFileSync(join(folder, 'a.yaml'), stringify(toolDocument({ description: 'Changed without a version bump.' })));
      writeFileSync(join(folder, 'b.yaml'), stringify(toolDocument({ name: 'bad_tool', parameters: { type: 'object', properties: {}, required: ['id'] } })));
      writeFileSync(join(folder, 'c.yaml'), `${stringify(toolDocument({ name: 'ok_tool' }))}---\n${stringify(toolDocument({ name: 'ok_tool' }))}`);
      writeFileSync(join(folder, 'd.json'), '{ not json');
      const run = await cli(push(folder), env);
      expect(run.code).toBe(1);
      const lines = run.stdout.split('\n');
      expect(run.stdout).toMatch(/\n {2}issue_refund \(.*a\.yaml\): 409 conflict: version 1\.0\.0 must be greater than the current 1\.0\.0/);
      expect(run.stdout).toMatch(/\n {2}bad_tool \(.*b\.yaml\): 400 validation_failed: tool document is invalid \[\/parameters\/properties\/id/);
      expect(lines.filter((l) => l.startsWith('ok_tool'))).toEqual([expect.stringMatching(/created/), expect.stringMatching(/failed\s+duplicate name/)]);
      expect(run.stdout).toMatch(/\n {2}ok_tool \(.*c\.yaml#2\): duplicate name: also in .*c\.yaml#1\n/);
      expect(run.stdout).toMatch(/\n {2}- \(.*d\.json\): cannot parse: /);
      expect(run.stdout).toMatch(/5 documents: created 1, updated 0, unchanged 0, failed 4/);
    });

    it('fails fast with exit 3 when the token may not publish: the other documents are not attempted', async () => {
      const env = { REGISTRY_URL: registry.url, REGISTRY_TOKEN: await registry.token(uniqueTenant(), ['billing:read']) };
      const many = Array.from({ length: 6 }, (_, i) => toolDocument({ name: `tool_${i}` }));
      writeFileSync(join(dir, 'many.json'), JSON.stringify(many));
      const run = await cli(['push', '--concurrency', '1', join(dir, 'many.json')], env);
      expect(run.code).toBe(3);
      expect(run.stdout).toMatch(/tool_0\s+1\.0\.0\s+failed\s+403 forbidden/);
      expect(run.stdout).toMatch(/6 documents: created 0, updated 0, unchanged 0, failed 1, skipped 5/);
      expect(run.stderr).toMatch(/stopped at the first authentication failure/);
      const bad = await cli(['push', join(dir, 'many.json')], { ...env, REGISTRY_TOKEN: 'not-a-token' });
      expect(bad.code).toBe(3);
    });

    it('--dry-run asks the registry: it predicts a 409 for changed content under the same version and a 400 with pointers', async () => {
      const tenant = uniqueTenant();
      const env = { REGISTRY_URL: registry.url, REGISTRY_TOKEN: await registry.token(tenant) };
      const file = join(dir, `${tenant}.json`);
      writeFileSync(file, JSON.stringify([toolDocument()]));
      expect((await cli(push(file), env)).code).toBe(0);
      writeFileSync(file, JSON.stringify([toolDocument({ description: 'Changed, same version.' }), toolDocument({ name: 'typo_tool', parameters: { type: 'object', properties: { n: { type: 'integer', minimun: 1 } } } })]));
      const run = await cli(push('--dry-run', '--json', file), env);
      expect(run.code).toBe(1);
      const report = JSON.parse(run.stdout) as { dry_run: boolean; exit_code: number; totals: Record<string, number>; outcomes: { name: string; action: string; error?: { status: number; details: { pointer: string }[] } }[] };
      expect(report).toMatchObject({ dry_run: true, exit_code: 1, totals: { failed: 2 } });
      expect(report.outcomes.map((o) => [o.name, o.action, o.error?.status])).toEqual([['issue_refund', 'failed', 409], ['typo_tool', 'failed', 400]]);
      expect(report.outcomes[1]!.error!.details.map((d) => d.pointer)).toEqual(['/parameters/properties/n/minimun']);
      expect((await (await registry.client(tenant)).getTool('issue_refund')).tool.revision).toBe(1);
    });

    it('refuses an empty input with exit 2 unless --allow-empty', async () => {
      const env = { REGISTRY_URL: registry.url, REGISTRY_TOKEN: await registry.token(uniqueTenant()) };
      const empty = mkdtempSync(join(dir, 'empty-'));
      const run = await cli(push(empty), env);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/no tool documents found/);
      const allowed = await cli(push('--allow-empty', '--json', empty), env);
      expect(allowed.code).toBe(0);
      expect(JSON.parse(allowed.stdout)).toMatchObject({ exit_code: 0, outcomes: [] });
    });
  });

  describe('the example catalog', () => {
    it('registers every tool, then discover finds them from the CLI', async () => {
      const tenant = uniqueTenant();
      const env = { REGISTRY_URL: registry.url, REGISTRY_TOKEN: await registry.token(tenant) };
      const pushed = await cli(push('examples/catalog'), env);
      expect(pushed.stdout).toMatch(/failed 0/);
      expect(pushed.code).toBe(0);
      const counts = /(\d+) documents: created (\d+)/.exec(pushed.stdout);
      expect(Number(counts?.[1])).toBeGreaterThanOrEqual(30);
      expect(counts?.[2]).toBe(counts?.[1]);

      const cards = [];
      for await (const card of (await registry.client(tenant)).iterateTools()) cards.push(card);
      expect(new Set(cards.map((c) => c.category))).toEqual(new Set(['billing', 'support', 'devops', 'crm']));
      for (const card of cards) {
        expect(card.not_for, card.name).toBeTruthy();
        expect(card.aliases.length, card.name).toBeGreaterThan(0);
        expect(card.examples.length, card.name).toBeGreaterThan(0);
      }

      const found = await cli(['discover', 'the nightly export job is stuck, stop it', '--top-k', '3'], env);
      expect(found.code).toBe(0);
      expect(found.stdout).toMatch(/^\d tools? for "the nightly export job is stuck, stop it"/);
      expect(found.stdout).toMatch(/\n1\s+terminate_batch_process\s+1\.0\.0\s+\d\.\d{3}\s+devops:admin\s+Stop a stuck batch job\./);
      expect(found.stdout).toMatch(/search mode: lexical/);
      expect(found.stdout).toMatch(/tokens: shortlist \d+ \(\d+\.\d% of the catalog's [\d,]+\)/);

      const json = JSON.parse((await cli(['discover', 'refund invoice INV-2024-0042', '--json', '--format', 'mcp', '-k', '1'], env)).stdout) as { tools: { name: string; schema: Record<string, unknown> }[] };
      expect(json.tools[0]).toMatchObject({ name: 'issue_refund', schema: { name: 'issue_refund', inputSchema: expect.any(Object) } });
    });

    it('runs the agent loop example: discover, pick, authorize, execute', async () => {
      const { runTurn } = await import('../../examples/agent-loop.js');
      const tenant = uniqueTenant();
      await cli(push('examples/catalog'), { REGISTRY_URL: registry.url, REGISTRY_TOKEN: await registry.token(tenant) });
      const agent = await registry.client(tenant, ['billing:read', 'billing:write']);
      const turn = await runTurn(agent, 'Refund invoice INV-2024-0042, the blender arrived broken');
      expect(turn.call).toMatchObject({ tool: 'issue_refund', arguments: { invoice_id: 'INV-2024-0042' } });
      expect(turn.decision?.decision).toBe('allow');
      expect(turn.result).toMatchObject({ ok: true, tool: 'issue_refund' });
      // A tool outside the token's scopes never reaches the picker.
      const devops = await runTurn(agent, 'The nightly-export job is stuck, terminate the batch process');
      expect(devops.shortlist.map((t) => t.name)).not.toContain('terminate_batch_process');
    });
  });
});
