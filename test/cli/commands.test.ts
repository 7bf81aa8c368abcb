import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import type { DiscoverResponse } from '../../clients/typescript/src/index.js';
import { formatDiscovery } from '../../src/cli/discover.js';
import { cli } from './run-cli.js';

const COMMANDS = ['serve', 'migrate', 'token', 'eval', 'push', 'import-mcp', 'discover', 'bench'];

describe('tool-registry CLI', () => {
  it.each(COMMANDS)('prints help for %s and exits 0', async (command) => {
    const run = await cli([command, '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`^Usage: tool-registry ${command}`));
  });

  it('lists every command in the top-level help', async () => {
    const run = await cli(['--help']);
    for (const command of COMMANDS) expect(run.stdout).toContain(`  ${command}`);
  });

  it('exits 2 (usage) with usage help on unknown commands and missing arguments', async () => {
    expect((await cli(['frobnicate'])).code).toBe(2);
    const missing = await cli(['push']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/missing required argument 'paths'/);
  });

  it('fails once and clearly when the registry is unreachable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'registry-cli-'));
    try {
      writeFileSync(join(dir, 'tool.json'), '{"name":"x"}');
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      await new Promise((resolve) => server.close(resolve));
      const run = await cli(['push', dir, '--registry', `http://127.0.0.1:${port}`, '--retries', '0']);
      expect(run.code).toBe(4);
      expect(run.stderr).toBe(`error: cannot reach http://127.0.0.1:${port}: ECONNREFUSED (no response network_error)\n`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('bench fails with a clear message when the benchmark is not installed', async () => {
    const root = mkdtempSync(join(tmpdir(), 'registry-bench-'));
    try {
      writeFileSync(join(root, 'package.json'), '{"scripts":{}}');
      const run = await cli(['bench', '--sizes', '100'], {}, root);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/benchmark is not installed: package.json has no "bench" script/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('discover output', () => {
  const result: DiscoverResponse = {
    discovery_id: '5b0f7f5e-1111-4222-8333-944445555666',
    tools: [
      {
        name: 'terminate_batch_process',
        version: '1.0.0',
        score: 0.7142,
        card: {
          name: 'terminate_batch_process', version: '1.0.0', status: 'active', summary: 'Stop a stuck batch job.', not_for: null, aliases: [], examples: [], tags: [],
          category: 'devops', required_scopes: ['devops:admin'], sensitivity: 'high', side_effects: true, tokens: { openai: 120, 'openai-responses': 118, anthropic: 110, gemini: 112, mcp: 140, raw: 100 }, updated_at: '2026-01-01T00:00:00.000Z',
        },
        schema: { type: 'function', function: { name: 'terminate_batch_process', description: 'Stop a stuck batch job.', parameters: { type: 'object' } } },
      },
    ],
    tokens: { shortlist: 120, catalog: 4405 },
    low_confidence: true,
    search_mode: 'hybrid',
    searched_query: { bounded: false, part: 'whole', chars: 22, total_chars: 22 },
  };

  it('pretty-prints the ranked shortlist with scores, search mode and token economics', () => {
    expect(formatDiscovery('stop the stuck job', result)).toBe(
      [
        '1 tool for "stop the stuck job"  (low confidence)',
        '',
        '#  tool                     version  score  scopes        summary',
        '-  -----------------------  -------  -----  ------------  -----------------------',
        '1  terminate_batch_process  1.0.0    0.714  devops:admin  Stop a stuck batch job.',
        '',
        'search mode: hybrid',
        "tokens: shortlist 120 (2.7% of the catalog's 4,405)",
        'discovery id: 5b0f7f5e-1111-4222-8333-944445555666',
        '',
      ].join('\n'),
    );
  });

  it('says so when nothing passed the relevance floor', () => {
    expect(formatDiscovery('weather', { ...result, tools: [], tokens: { shortlist: 0, catalog: 4405 } })).toMatch(/^0 tools for "weather".*\n\n {2}no tool passed the relevance floor/s);
  });
});
