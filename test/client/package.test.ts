import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { VERSION } from '../../clients/typescript/src/index.js';
import { forEachDatabase } from '../helpers/databases.js';
import { uniqueTenant } from '../helpers/tokens.js';
import { useLiveRegistry } from './live-registry.js';

const run = promisify(execFile);
const PACKAGE_DIR = fileURLToPath(new URL('../../clients/typescript/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

/**
 * The TypeScript SDK as a user gets it: `npm pack` (which builds JS and .d.ts with tsc), the
 * tarball installed into a scratch project offline, a consumer type-checked by strict tsc against
 * the installed declarations (skipLibCheck off) and run with plain `node` against the registry.
 */
const CONSUMER = `
import { RegistryClient, RegistryError, type AnthropicTool, type DiscoverResponse } from 'tool-registry-client';

const registry = new RegistryClient({ userAgent: 'scratch-consumer/1.0' });
await registry.createTool({
  name: 'issue_refund', version: '1.0.0', description: 'Refund a paid invoice in full or in part.',
  not_for: 'Not for cancelling unpaid orders; use cancel_order.',
  parameters: { type: 'object', properties: { invoice_id: { type: 'string', description: 'Invoice to refund' } }, required: ['invoice_id'], additionalProperties: false },
});
const plan = await registry.dryRunUpdate('issue_refund', {
  name: 'issue_refund', version: '1.1.0', description: 'Refund a paid invoice, fully or partly.',
  parameters: { type: 'object', properties: { invoice_id: { type: 'string', description: 'Invoice to refund' } }, required: ['invoice_id'], additionalProperties: false },
});
const found: DiscoverResponse<'anthropic'> = await registry.discover({ query: 'refund invoice', format: 'anthropic' });
const tool: AnthropicTool | undefined = found.tools[0]?.schema;
// @ts-expect-error an Anthropic tool has no OpenAI "function" member: schemas are typed by format
void found.tools[0]?.schema.function;
const openai = await registry.discover('refund invoice');
const strict: boolean | undefined = openai.tools[0]?.schema.function.strict;
const decision = await registry.authorize({ tool: 'issue_refund', arguments: { invoice_id: 'inv_1' }, discovery_id: found.discovery_id });
let conflict = '';
try {
  await registry.createTool({ name: 'issue_refund', version: '1.0.0', description: 'again', parameters: { type: 'object' } });
} catch (error) {
  if (error instanceof RegistryError) conflict = \`\${error.status} \${error.code}\`;
}
console.log(JSON.stringify({ plan: plan.outcome, changes: plan.changes, schema: tool, strict, decision: decision.decision, conflict }));
`;

let scratch: string;
let packed: string[];

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'registry-sdk-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: PACKAGE_DIR, timeout: 120_000 });
  const [info] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  packed = info!.files.map((f) => f.path).sort();
  const project = join(scratch, 'consumer');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module', dependencies: { 'tool-registry-client': `file:../${info!.filename}` } }));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: project, timeout: 120_000 });
  writeFileSync(join(project, 'consumer.ts'), CONSUMER);
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true,
        skipLibCheck: false, types: ['node'], typeRoots: [join(ROOT, 'node_modules', '@types')], outDir: 'out',
      },
      files: ['consumer.ts'],
    }),
  );
}, 180_000);
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('clients/typescript as a package', () => {
  it('packs built JS and declarations only, with no dependencies, at the version it reports', () => {
    expect(packed).toEqual(expect.arrayContaining(['README.md', 'dist/index.js', 'dist/index.d.ts', 'dist/client.js', 'package.json']));
    expect(packed.filter((f) => !f.startsWith('dist/') && !['README.md', 'package.json'].includes(f))).toEqual([]);
    expect(packed.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.version).toBe(VERSION);
  });

  it('type-checks a strict consumer against the installed declarations', async () => {
    const result = await run(process.execPath, [TSC, '-p', join(scratch, 'consumer', 'tsconfig.json')], { timeout: 120_000 }).catch((error: { stdout: string }) => error);
    expect('stdout' in result ? result.stdout : '').toBe('');
  }, 120_000);
});

forEachDatabase((db) => {
  const registry = useLiveRegistry(() => db.database);
  it('runs the compiled consumer with plain node against the registry', async () => {
    const env = { ...process.env, REGISTRY_URL: registry.url, REGISTRY_TOKEN: await registry.token(uniqueTenant('sdk')) };
    const { stdout } = await run(process.execPath, [join(scratch, 'consumer', 'out', 'consumer.js')], { cwd: join(scratch, 'consumer'), env, timeout: 60_000 });
    const result = JSON.parse(stdout) as Record<string, unknown>;
    expect(result).toMatchObject({ plan: 'updated', changes: ['description', 'not_for', 'summary', 'version'], decision: 'allow', conflict: '409 conflict', strict: true });
    expect(result.schema).toEqual({
      name: 'issue_refund',
      description: 'Refund a paid invoice in full or in part.\n\nNot for cancelling unpaid orders; use cancel_order.',
      input_schema: { type: 'object', properties: { invoice_id: { type: 'string', description: 'Invoice to refund' } }, required: ['invoice_id'], additionalProperties: false },
    });
  }, 60_000);
});
