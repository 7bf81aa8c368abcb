import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

import { mapMcpTool, registryName, splitCommand } from '../../src/cli/mcp-import.js';
import { type Database, fromPglite } from '../../src/db/client.js';
import { useLiveRegistry } from '../client/live-registry.js';
import { clonePglite } from '../helpers/databases.js';
import { uniqueTenant } from '../helpers/tokens.js';
import { cli } from './run-cli.js';

const SERVER = fileURLToPath(new URL('../fixtures/mcp-server.ts', import.meta.url));
/** The fixture MCP server over stdio, listing two tools per page. */
const COMMAND = `"${process.execPath}" --import tsx "${SERVER}"`;

describe('tool-registry import-mcp (stdio fixture server, PGlite in-process)', () => {
  let database: Database | undefined;
  let close: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const client = await clonePglite();
    database = fromPglite(client);
    close = () => client.close();
  });
  afterAll(async () => close?.());
  const registry = useLiveRegistry(() => database!);
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'registry-mcp-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('imports every page of tools with namespace, scopes and annotation mapping, then skips them on a rerun', async () => {
    const tenant = uniqueTenant();
    const env = { REGISTRY_URL: registry.url, REGISTRY_TOKEN: await registry.token(tenant) };
    const args = ['import-mcp', '--command', COMMAND, '--env', 'MCP_PAGE_SIZE=2', '--prefix', 'crm.', '--scopes', 'crm:read crm:write', '--category', 'crm'];
    const first = await cli(args, env);
    expect(first.stderr).toMatch(/5 tools from MCP server fixture-crm 2\.3\.0/);
    // Kept as published: no invented description, a warning from the registry instead (one line: tool, pointer, message).
    expect(first.stderr).not.toMatch(/described required parameter/);
    expect(first.stderr).toMatch(/^warning: crm\.add_note \/parameters\/properties\/body\/description: required parameter 'body' has no description/m);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/5 documents: created 5, updated 0, unchanged 0, failed 0/);

    const client = await registry.client(tenant);
    const names = [];
    for await (const card of client.iterateTools()) names.push(card.name);
    expect(names).toEqual(['crm.add_note', 'crm.delete_customer', 'crm.list_segments', 'crm.lookup_customer', 'crm.send-welcome_email']);

    const lookup = (await client.getTool('crm.lookup_customer')).tool;
    expect(lookup).toMatchObject({
      version: '2.3.0', // the MCP server's version
      description: 'Find a customer record by email address and return its id, name and plan.',
      required_scopes: ['crm:read', 'crm:write'],
      category: 'crm',
      tags: ['mcp'],
      side_effects: false, // readOnlyHint
      sensitivity: 'low',
      parameters: { type: 'object', properties: { email: { type: 'string', description: 'Email address of the customer.' } }, required: ['email'] },
      returns: { type: 'object', properties: { id: { type: 'string' } } },
      'x-mcp': { server: 'fixture-crm', tool: 'lookup_customer', title: 'Look up customer', annotations: { readOnlyHint: true } },
    });
    const destructive = (await client.getTool('crm.delete_customer')).tool;
    expect(destructive).toMatchObject({ side_effects: true, sensitivity: 'medium', returns: null }); // destructiveHint
    expect((await client.getTool('crm.add_note')).tool.side_effects).toBe(true); // no hints: MCP defaults (may modify)
    expect((await client.getTool('crm.send-welcome_email')).tool.side_effects).toBe(true); // readOnlyHint false

    const rerun = await cli(args, env);
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).toMatch(/5 documents: created 0, updated 0, unchanged 5, failed 0/);
  }, 30_000);

  it('has no --strict flag any more: nothing is filled in to opt out of', async () => {
    const run = await cli(['import-mcp', '--command', COMMAND, '--strict'], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/unknown option '--strict'/);
  });

  it('writes the mapped documents to a YAML file with --out instead of pushing', async () => {
    const out = join(dir, 'mcp-tools.yaml');
    const run = await cli(['import-mcp', '--command', COMMAND, '--prefix', 'fx_', '--out', out], {});
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/^warning: fx_add_note \/parameters\/properties\/body\/description: /m);
    const documents = parse(readFileSync(out, 'utf8')) as { name: string }[];
    expect(documents.map((d) => d.name)).toContain('fx_lookup_customer');
    // The written file is a valid push input: it registers as is.
    const env = { REGISTRY_URL: registry.url, REGISTRY_TOKEN: await registry.token(uniqueTenant()) };
    expect((await cli(['push', out], env)).stdout).toMatch(/created 5/);
  });

  it('declares roots, sampling and elicitation, repairs only what the registry would refuse, says why, and keeps the annotations', async () => {
    const tenant = uniqueTenant();
    const env = { REGISTRY_URL: registry.url, REGISTRY_TOKEN: await registry.token(tenant) };
    const run = await cli(['import-mcp', '--command', COMMAND, '--env', 'MCP_EXTRA_TOOLS=1', '--max-description', '900'], env);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stderr).toMatch(/7 tools from MCP server fixture-crm/);
    expect(run.stderr).toMatch(/changed \d+ of 7 tools so the registry accepts them/);
    expect(run.stderr).toMatch(/export_report: description cut from \d+ to 900 characters/);
    // An unknown format that is no typo registers as published, with a warning.
    expect(run.stderr).not.toMatch(/dropped unknown format/);
    expect(run.stderr).toMatch(/^warning: export_report \/parameters\/properties\/colour\/format: unknown format "colour"/m);
    expect(run.stderr).toMatch(/export_report: \/parameters\/properties\/colour\/examplez: unknown keyword kept as x-examplez/);
    expect(run.stderr).toMatch(/send-welcome_email: renamed from 'send-welcome email'/);
    const client = await registry.client(tenant);
    expect((await client.getTool('summarize_notes')).tool.name).toBe('summarize_notes');
    const report = (await client.getTool('export_report')).tool;
    expect(report.description.length).toBeLessThanOrEqual(900);
    expect(report.description.endsWith('…')).toBe(true);
    expect((report['x-mcp'] as { description: string }).description.length).toBeGreaterThan(1024);
    expect(report.parameters).toMatchObject({ properties: { colour: { type: 'string', format: 'colour', 'x-examplez': ['red'] } } });
    expect(report.warnings).toEqual([expect.objectContaining({ code: 'unknown_format', pointer: '/parameters/properties/colour/format' })]);
    // The kept annotations come back in the mcp format.
    const found = await client.discover({ query: 'export a CRM report as CSV', format: 'mcp', top_k: 1 });
    expect(found.tools[0]?.schema.annotations).toEqual({ title: 'Export report', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
  });

  it('lists each tool\'s repairs and the registry\'s warnings in the --json outcome', async () => {
    const env = { REGISTRY_URL: registry.url, REGISTRY_TOKEN: await registry.token(uniqueTenant()) };
    const run = await cli(['import-mcp', '--command', COMMAND, '--env', 'MCP_EXTRA_TOOLS=1', '--dry-run', '--json'], env);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { outcomes: { name: string; action: string; notes?: string[]; warnings?: { code: string; pointer: string }[] }[] };
    const addNote = report.outcomes.find((o) => o.name === 'add_note');
    expect(addNote).toMatchObject({ action: 'would create', warnings: [{ code: 'parameter_description_missing', pointer: '/parameters/properties/body/description' }] });
    expect(addNote).not.toHaveProperty('notes');
    expect(report.outcomes.find((o) => o.name === 'export_report')?.notes).toEqual(expect.arrayContaining(['/parameters/properties/colour/examplez: unknown keyword kept as x-examplez']));
    expect(report.outcomes.find((o) => o.name === 'lookup_customer')).not.toHaveProperty('notes');
    expect(report.outcomes.find((o) => o.name === 'lookup_customer')).not.toHaveProperty('warnings');
  });

  it('needs exactly one of --command and --url', async () => {
    const run = await cli(['import-mcp'], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/exactly one of --command \(stdio\) or --url/);
  });
});

describe('MCP tool mapping', () => {
  const tool = (overrides: Partial<Tool> = {}): Tool => ({ name: 'run', inputSchema: { type: 'object', properties: {} }, ...overrides });

  it('maps annotations to side effects and sensitivity', () => {
    expect(mapMcpTool(tool({ annotations: { readOnlyHint: true } }), { version: '1.0.0' }).document).toMatchObject({ side_effects: false, sensitivity: 'low' });
    expect(mapMcpTool(tool({ annotations: { destructiveHint: true } }), { version: '1.0.0' }).document).toMatchObject({ side_effects: true, sensitivity: 'medium' });
    expect(mapMcpTool(tool(), { version: '1.0.0' }).document.side_effects).toBe(true);
  });

  it('refuses high sensitivity without scopes and falls back to a description', () => {
    const mapped = mapMcpTool(tool(), { version: '1.0.0', sensitivity: 'high' });
    expect(mapped.document).toMatchObject({ sensitivity: 'medium', description: 'The run.' });
    expect(mapped.notes).toContain('sensitivity high needs --scopes; used medium');
    expect(mapMcpTool(tool(), { version: '1.0.0', sensitivity: 'high', scopes: ['ops'] }).document.sensitivity).toBe('high');
  });

  it('keeps the published schema: no parameter description invented, unknown keywords and formats kept, typos repaired', () => {
    const inputSchema = {
      type: 'object' as const,
      properties: { q: { type: 'string' }, sort: { type: 'string', optional: true }, dir: { type: 'string', format: 'path' }, n: { type: 'integer', minimun: 1 } },
      required: ['q'],
    };
    const mapped = mapMcpTool(tool({ inputSchema, description: 'Search.' }), { version: '1.0.0' });
    expect(mapped.document.parameters).toEqual({ ...inputSchema, properties: { ...inputSchema.properties, n: { type: 'integer', 'x-minimun': 1 } } });
    expect(mapped.notes).toEqual(['/parameters/properties/n/minimun: unknown keyword kept as x-minimun']);
  });

  it('makes registry-safe names', () => {
    expect(registryName('gh.', 'create issue')).toBe('gh.create_issue');
    expect(registryName('', '1password/read')).toBe('t_1password_read');
    expect(registryName('', 'x'.repeat(80))).toHaveLength(64);
  });

  it('splits command lines with quotes', () => {
    expect(splitCommand(`node "my server.js" --flag='a b' plain\\ space`)).toEqual(['node', 'my server.js', '--flag=a b', 'plain space']);
    expect(() => splitCommand('node "open')).toThrow(/unterminated/);
  });
});
