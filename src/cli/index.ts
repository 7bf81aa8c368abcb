import { Command } from 'commander';

import { openMigratedDatabase } from '../bootstrap.js';
import { loadConfig } from '../config.js';
import { startServer } from '../server.js';
import { VERSION } from '../version.js';
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

program.parseAsync().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
