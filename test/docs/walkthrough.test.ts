import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ROOT, type ServiceProcess, startService } from '../helpers/server-process.js';
import { TEST_SECRET } from '../helpers/tokens.js';

const run = promisify(execFile);

/** The README's walkthrough: the first shell block after its heading, as a newcomer copies it. */
function walkthrough(): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Walkthrough'));
  const block = /```sh\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README.md has no shell block under "## Walkthrough"');
  return block[1]!;
}

describe('the README walkthrough, run as written against a fresh server', () => {
  let dataDir: string;
  let service: ServiceProcess;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'walkthrough-'));
    service = await startService({ DATA_DIR: dataDir });
  }, 90_000);

  afterAll(async () => {
    await service?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('succeeds step by step and shows what the comments promise', async () => {
    const script = walkthrough().replaceAll('localhost:8080', service.base.replace('http://', ''));
    // The token command mints with the server's key; push finds the server through REGISTRY_URL.
    const env = { ...process.env, JWT_SECRET: TEST_SECRET, DATA_DIR: dataDir, REGISTRY_URL: service.base };
    const { stdout } = await run('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT, env, maxBuffer: 16 * 1024 * 1024 });
    expect(stdout).toContain('"name":"refund_order"');
    expect(stdout).toMatch(/"decision":"allow","reasons":\[\],"tool":\{"name":"refund_order","version":"1.0.0"\}/);
    expect(stdout).toMatch(/"decision":"deny","reasons":\[\{"code":"policy_denied","message":"refunds above 500 need billing:admin"/);
    expect(stdout).toContain('"version":"1.1.0"');
    // Step 7 leaves the example catalog pushable after the walkthrough: 36 tools created, none refused.
    expect(stdout).toContain('36 documents: created 36, updated 0, unchanged 0, failed 0');
  }, 180_000);
});
