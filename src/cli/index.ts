import { Command } from 'commander';

import { createEmbedder, openMigratedDatabase } from '../bootstrap.js';
import { loadConfig } from '../config.js';
import { startServer } from '../server.js';
import { VERSION } from '../version.js';
import { markdownTable, runEval } from '../eval/run.js';
import type { RankingMode } from '../discovery/fusion.js';
import { mintToken } from './token.js';

/* eslint-disable no-console -- the CLI's output is its interface */

const program = new Command('tool-registry').version(VERSION).description('Tool registry for AI agents');

program
  .command('serve')
  .description('start the HTTP service (embedded PGlite unless DATABASE_URL is set)')
  .action(async () => {
    await startServer(loadConfig());
  });

program
  .command('migrate')
  .description('apply pending database migrations and exit')
  .action(async () => {
    const database = await openMigratedDatabase(loadConfig(), { info: (obj: object) => console.log(JSON.stringify(obj)) });
    await database.close();
    console.log('migrations up to date');
  });

program
  .command('token')
  .description('mint a JWT for JWT_SECRET or the development secret in DATA_DIR')
  .requiredOption('--tenant <tenant>', 'tenant the token acts for')
  .option('--scope <scopes>', 'space-separated scopes', '')
  .option('--subject <sub>', 'subject (user or service)', 'dev-user')
  .option('--ttl <duration>', 'lifetime, e.g. 15m, 1h, 7d', '1h')
  .action(async (options: { tenant: string; scope: string; subject: string; ttl: string }) => {
    console.log(await mintToken(loadConfig(), options));
  });

program
  .command('eval')
  .description('register a dataset (tools.jsonl, queries.jsonl) on a throwaway database and report retrieval quality')
  .option('--data <dir>', 'dataset folder', '../shared/bench/dev-data')
  .option('--out <dir>', 'where eval.json and eval.md are written', 'eval-results')
  .option('--modes <list>', 'comma-separated: hybrid, lexical, vector', 'lexical,vector,hybrid')
  .option('--limit <n>', 'only the first n queries', (v) => Number.parseInt(v, 10))
  .action(async (options: { data: string; out: string; modes: string; limit?: number }) => {
    const report = await runEval({
      dataDir: options.data,
      outDir: options.out,
      embedder: await createEmbedder(loadConfig()),
      modes: options.modes.split(',').map((m) => m.trim()) as RankingMode[],
      limit: options.limit,
      progress: (message) => console.error(message),
    });
    console.log(markdownTable(report));
    if (report.rejected.length > 0) console.error(`rejected tools: ${JSON.stringify(report.rejected.slice(0, 5))}`);
  });

program.parseAsync().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
