import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { useLiveRegistry } from '../client/live-registry.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { uniqueTenant } from '../helpers/tokens.js';
import { cli } from './run-cli.js';

const SERVER = fileURLToPath(new URL('../fixtures/mcp-server.ts', import.meta.url));
const COMMAND = `"${process.execPath}" --import tsx "${SERVER}"`;

/** A nested required property without a description: accepted, with a warning. */
const nested = (version = '1.0.0') =>
  toolDocument({
    name: 'group_issues',
    version,
    parameters: {
      type: 'object',
      properties: { groupBy: { type: 'array', description: 'Facets.', items: { type: 'object', properties: { facet: { type: 'string' } }, required: ['facet'] } } },
      required: ['groupBy'],
    },
  });
const FACET = '/parameters/properties/groupBy/items/properties/facet/description';

/** The CLI's warning lines through real HTTP, on every database leg: push, import-mcp, and a tenant that refuses a code. */
forEachDatabase((db) => {
  const registry = useLiveRegistry(() => db.database);
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'registry-warnings-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe('tool-registry push warnings', () => {
    it('pushes a tool with a nested undescribed property and prints one stderr line per warning: tool, pointer, message', async () => {
      const tenant = uniqueTenant();
      const env = { REGISTRY_URL: registry.url, REGISTRY_TOKEN: await registry.token(tenant) };
      const file = join(dir, `${tenant}.json`);
      writeFileSync(file, JSON.stringify([nested(), toolDocument()]));
      const run = await cli(['push', file], env);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/2 documents: created 2/);
      expect(run.stderr).toBe(`warning: group_issues ${FACET}: required parameter 'facet' has no description: models must guess what to send\n`);

      const json = await cli(['push', '--json', file], env);
      const report = JSON.parse(json.stdout) as { outcomes: { name: string; action: string; warnings?: { code: string; pointer: string }[] }[] };
      expect(report.outcomes.find((o) => o.name === 'group_issues')).toMatchObject({ action: 'unchanged', warnings: [{ code: 'parameter_description_missing', pointer: FACET }] });
      expect(report.outcomes.find((o) => o.name === 'issue_refund')).not.toHaveProperty('warnings');
    });

    it('fails the document the tenant refuses, naming pointer and code, and exits 1', async () => {
      const tenant = uniqueTenant();
      const admin = await registry.token(tenant, ['registry:admin']);
      expect((await call(registry.app, 'PUT', '/v1/settings', { token: admin, body: { warnings_as_errors: ['parameter_description_missing'] } })).statusCode).toBe(200);
      const file = join(dir, `${tenant}.json`);
      writeFileSync(file, JSON.stringify(nested()));
      const run = await cli(['push', file], { REGISTRY_URL: registry.url, REGISTRY_TOKEN: await registry.token(tenant) });
      expect(run.code).toBe(1);
      expect(run.stdout).toMatch(new RegExp(`group_issues \\(.*\\): 400 validation_failed: .*\\[${FACET.replace(/\//g, '\\/')} parameter_description_missing: `));
    });
  });

  describe('tool-registry import-mcp warnings', () => {
    it('imports the server\'s schemas as published and prints the registry\'s warnings', async () => {
      const tenant = uniqueTenant();
      const env = { REGISTRY_URL: registry.url, REGISTRY_TOKEN: await registry.token(tenant) };
      const run = await cli(['import-mcp', '--command', COMMAND, '--version', '1.0.0'], env);
      expect(run.code, run.stderr + run.stdout).toBe(0);
      expect(run.stdout).toMatch(/5 documents: created 5/);
      expect(run.stderr.split('\n').filter((line) => line.startsWith('warning: '))).toEqual([
        "warning: add_note /parameters/properties/body/description: required parameter 'body' has no description: models must guess what to send",
      ]);
      const stored = (await (await registry.client(tenant)).getTool('add_note')).tool;
      expect(stored.parameters).toMatchObject({ properties: { body: { type: 'string' } } });
      expect((stored.parameters as { properties: { body: Record<string, unknown> } }).properties.body).not.toHaveProperty('description');
      expect(stored.warnings).toEqual([expect.objectContaining({ code: 'parameter_description_missing', pointer: '/parameters/properties/body/description' })]);
    });
  });
});
