import { writeFile } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';

import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import semver from 'semver';
import { stringify as toYaml } from 'yaml';

import type { SchemaFormat, SearchMode } from '../../clients/typescript/src/index.js';
import { RegistryError } from '../../clients/typescript/src/index.js';
import { SENSITIVITIES, type Sensitivity } from '../tools/model.js';
import { toolWarnings } from '../tools/warnings.js';
import { VERSION } from '../version.js';
import { benchUnavailable, runBench } from './bench.js';
import { formatDiscovery } from './discover.js';
import { loadDocuments } from './documents.js';
import { EXIT, type ExitCode, exitCodeFor, exitCodeOf } from './exit-codes.js';
import { clientFrom, type CliIo, type ConnectionFlags, DEFAULT_REGISTRY_URL, processIo } from './io.js';
import { listMcpTools, mapMcpTool, type McpSource } from './mcp-import.js';
import { progressBar, pushAll, type PushOutcome, pushSummary, pushTotals, waitForIndexing, warningLines } from './push.js';
import { documentsOf, syncOutcomes, unreadable, waitForSync } from './sync.js';

/** Documents at or above this count get a progress bar (on a terminal). */
const PROGRESS_THRESHOLD = 10;

const integer = (min: number, max: number) => (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`must be an integer from ${min} to ${max}`);
  return n;
};
const collect = (value: string, previous: string[] = []) => [...previous, value];
const words = (value: string | undefined) => (value ?? '').split(/[\s,]+/).filter(Boolean);

function withConnection(command: Command): Command {
  return command
    .option('--registry <url>', `registry base URL (env REGISTRY_URL, default ${DEFAULT_REGISTRY_URL})`)
    .option('--token <jwt>', 'bearer token (env REGISTRY_TOKEN)')
    .option('--timeout <ms>', 'per-request timeout in ms', integer(0, 600_000))
    .option('--retries <n>', 'retries on 408, 429, 5xx and network errors', integer(0, 10));
}

/** A problem found by a command itself (printed without a stack), with its exit code. */
class CliError extends Error {
  override readonly name = 'CliError';

  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.usage,
  ) {
    super(message);
  }
}

interface State {
  exitCode: number;
}

/** Flags of every command that pushes documents (push, import-mcp). */
interface PushFlags extends ConnectionFlags {
  dryRun?: boolean;
  progress: boolean;
  concurrency?: number;
  json?: boolean;
  wait?: boolean;
  waitTimeout: number;
  allowEmpty?: boolean;
}

function withPushOptions(command: Command): Command {
  return command
    .option('--dry-run', 'ask the registry what would change (its dry-run API: validation, conflicts, versions, If-Match), change nothing')
    .option('--json', 'print the outcome as JSON on stdout (no table, no progress bar)')
    .option('--wait', 'after pushing, wait until every pushed tool is indexed (searchable by meaning)')
    .option('--wait-timeout <seconds>', 'give up waiting after this long', integer(1, 86_400), 120)
    .option('--allow-empty', 'succeed when there is no document to push (default: exit 2)')
    .option('--no-progress', 'no progress bar');
}

/** The exit code of a finished push: auth > refused documents > registry away > not indexed. */
function pushExitCode(outcomes: PushOutcome[], authFailure: boolean): ExitCode {
  if (authFailure) return EXIT.auth;
  const failed = outcomes.filter((o) => o.action === 'failed');
  if (failed.some((o) => !o.error || exitCodeFor(o.error.status, o.error.code) === EXIT.rejected)) return EXIT.rejected;
  if (failed.length > 0) return EXIT.unavailable;
  if (outcomes.some((o) => o.index_status !== undefined && o.index_status !== 'indexed')) return EXIT.notIndexed;
  return EXIT.ok;
}

/** Prints a push's outcomes (table or JSON) with its exit code. */
function report(io: CliIo, state: State, flags: PushFlags, outcomes: PushOutcome[], extra: Record<string, unknown> = {}): void {
  io.stderr(warningLines(outcomes));
  if (flags.json) io.stdout(`${JSON.stringify({ dry_run: flags.dryRun ?? false, exit_code: state.exitCode, totals: pushTotals(outcomes), outcomes, ...extra }, null, 2)}\n`);
  else io.stdout(pushSummary(outcomes));
}

/** Pushes loaded documents with a progress bar on long runs, prints the outcome, sets the exit code. */
async function pushAndReport(io: CliIo, state: State, flags: PushFlags, loaded: Awaited<ReturnType<typeof loadDocuments>>): Promise<PushOutcome[]> {
  if (loaded.length === 0 && !flags.allowEmpty) throw new CliError('no tool documents found (pass --allow-empty when that is expected)');
  const client = clientFrom(io, flags);
  // Fail once, clearly, when the registry is unreachable, rather than once per document.
  await client.health();
  const bar = progressBar(!flags.json && flags.progress && io.interactive && loaded.length >= PROGRESS_THRESHOLD, loaded.length);
  let result: Awaited<ReturnType<typeof pushAll>>;
  try {
    result = await pushAll(client, loaded, { dryRun: flags.dryRun, concurrency: flags.concurrency, onProgress: (done) => bar.update(done) });
  } finally {
    bar.stop();
  }
  const { outcomes, authFailure } = result;
  if (flags.wait && !flags.dryRun && !authFailure) await waitForIndexing(client, outcomes, flags.waitTimeout * 1000);
  state.exitCode = pushExitCode(outcomes, authFailure !== undefined);
  report(io, state, flags, outcomes, authFailure ? { error: authFailure.error.describe() } : {});
  if (authFailure) io.stderr(`error: ${authFailure.error.describe()}\nstopped at the first authentication failure: check the token and its registry:publish scope\n`);
  return outcomes;
}

/** Flags of `push --source`: the folder is the source's whole catalog (POST /v1/catalog/sync). */
interface SyncFlags extends PushFlags {
  source?: string;
  prune?: boolean;
}

/**
 * `push --source NAME`: one request declares every tool of the folder; the registry creates,
 * versions, leaves alone and (with --prune) retires. --wait follows the source's indexing.
 */
async function syncAndReport(io: CliIo, state: State, flags: SyncFlags & { source: string }, loaded: Awaited<ReturnType<typeof loadDocuments>>): Promise<void> {
  if (loaded.length === 0 && !flags.allowEmpty) throw new CliError('no tool documents found (pass --allow-empty when that is expected)');
  const problems = unreadable(loaded);
  if (problems) {
    state.exitCode = EXIT.rejected;
    report(io, state, flags, problems);
    io.stderr(`error: nothing was synced: every document of source ${flags.source} must load${flags.prune ? ' (with --prune, a missing one would be retired)' : ''}\n`);
    return;
  }
  const client = clientFrom(io, flags);
  let outcomes: PushOutcome[];
  try {
    const result = await client.syncCatalog(
      { source: flags.source, tools: documentsOf(loaded), prune: flags.prune ?? false, dry_run: flags.dryRun ?? false },
      flags.timeout === undefined ? {} : { timeoutMs: flags.timeout },
    );
    outcomes = syncOutcomes(result, loaded);
  } catch (error) {
    if (!(error instanceof RegistryError)) throw error;
    state.exitCode = exitCodeOf(error);
    io.stderr(`error: ${error.describe()}\n`);
    return;
  }
  let index: Awaited<ReturnType<typeof waitForSync>> | undefined;
  if (flags.wait && !flags.dryRun) index = await waitForSync(client, flags.source, { timeoutMs: flags.waitTimeout * 1000, interactive: io.interactive && !flags.json, write: io.stderr });
  const refused = outcomes.some((o) => o.action === 'failed');
  state.exitCode = refused ? EXIT.rejected : index && (index.pending > 0 || index.failed > 0) ? EXIT.notIndexed : EXIT.ok;
  report(io, state, flags, outcomes, { source: flags.source, ...(index ? { index } : {}) });
}

/** Builds the `tool-registry` command line; output goes to `io`, the exit code to `state`. */
function createProgram(io: CliIo, state: State): Command {
  const program = new Command('tool-registry')
    .version(VERSION)
    .description('Tool registry for AI agents: run the service, publish tools, query discovery')
    .enablePositionalOptions()
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError('(add --help for usage)');

  program
    .command('serve')
    .description('start the HTTP service (embedded PGlite unless DATABASE_URL is set)')
    .action(async () => {
      const [{ startServer }, { loadConfig }] = await Promise.all([import('../server.js'), import('../config.js')]);
      await startServer(loadConfig(io.env));
    });

  program
    .command('migrate')
    .description('apply pending database migrations and exit')
    .action(async () => {
      const [{ openMigratedDatabase }, { loadConfig }] = await Promise.all([import('../bootstrap.js'), import('../config.js')]);
      const database = await openMigratedDatabase(loadConfig(io.env), {
        info: (obj: object) => io.stdout(`${JSON.stringify(obj)}\n`),
        warn: (obj: object, message?: string) => io.stderr(`${JSON.stringify({ ...obj, message })}\n`),
      });
      await database.close();
      io.stdout('migrations up to date\n');
    });

  program
    .command('token')
    .description('mint a JWT for JWT_SECRET or the development secret in DATA_DIR')
    .requiredOption('--tenant <tenant>', 'tenant the token acts for')
    .option('--scope <scopes>', 'space-separated scopes', '')
    .option('--subject <sub>', 'subject (user or service)', 'dev-user')
    .option('--ttl <duration>', 'lifetime, e.g. 15m, 1h, 7d', '1h')
    .action(async (options: { tenant: string; scope: string; subject: string; ttl: string }) => {
      const [{ mintToken }, { loadConfig }] = await Promise.all([import('./token.js'), import('../config.js')]);
      io.stdout(`${await mintToken(loadConfig(io.env), options)}\n`);
    });

  program
    .command('reembed')
    .description('rebuild every tool vector for the configured embedding model (after a model change)')
    .option('--purge-other-models', 'also delete vectors of other models', false)
    .action(async (options: { purgeOtherModels: boolean }) => {
      const [{ createEmbedder, openMigratedDatabase }, { loadConfig }, { reembed }, { createServices }] = await Promise.all([
        import('../bootstrap.js'),
        import('../config.js'),
        import('../embedding/reembed.js'),
        import('../services.js'),
      ]);
      const config = loadConfig(io.env);
      const embedder = await createEmbedder(config);
      if (!embedder) throw new Error('EMBEDDING_PROVIDER is none: there is nothing to embed with');
      // An operator's maintenance command: its statements (purging another model's vectors) are not bounded like a request's.
      const database = await openMigratedDatabase({ ...config, databaseStatementTimeoutMs: 0 }, { info: () => undefined, warn: (obj: object, message?: string) => io.stderr(`${JSON.stringify({ ...obj, message })}\n`) });
      try {
        const silent = { info: () => undefined, warn: () => undefined, debug: () => undefined };
        const { indexer } = createServices(config, { database, embedder, log: silent });
        if (!indexer) throw new Error('no indexer without an embedder');
        const result = await reembed(database, indexer, options);
        io.stdout(`re-embedded ${result.tools} tools with ${result.model} in ${result.seconds.toFixed(1)} s\n`);
      } finally {
        await database.close();
      }
    });

  program
    .command('eval')
    .description('register each dataset (tools.jsonl, queries.jsonl, infeasible.jsonl) on a throwaway database and report retrieval quality beside the plain-BM25 floor')
    .option('--data <dirs>', 'comma-separated dataset folders', '../shared/bench/dev-data,../shared/bench/dev-mcp')
    .option('--out <dir>', 'where <dataset>/eval.json and eval.md are written', 'eval-results')
    .option('--modes <list>', 'comma-separated: hybrid, lexical, vector', 'lexical,vector,hybrid')
    .option('--limit <n>', 'only the first n queries', integer(1, 1_000_000))
    .option('--stride <n>', 'only every n-th query (a sample across the set)', integer(1, 1_000_000))
    .option('--ranking-only', 'skip the tool-half, abstention and long-request checks (each registers the dataset again or replays it)')
    .action(async (options: { data: string; out: string; modes: string; limit?: number; stride?: number; rankingOnly?: boolean }) => {
      const [{ createEmbedder }, { loadConfig }, { markdownTable, runEval }] = await Promise.all([import('../bootstrap.js'), import('../config.js'), import('../eval/run.js')]);
      const embedder = await createEmbedder(loadConfig(io.env));
      try {
        for (const dataDir of options.data.split(',').map((d) => d.trim()).filter(Boolean)) {
          const report = await runEval({
            dataDir,
            outDir: join(options.out, basename(resolve(dataDir))),
            embedder,
            modes: options.modes.split(',').map((m) => m.trim()) as SearchMode[],
            limit: options.limit,
            stride: options.stride,
            rankingOnly: options.rankingOnly,
            progress: (message) => io.stderr(`${message}\n`),
          });
          io.stdout(`## ${dataDir}\n\n${markdownTable(report)}\n\n`);
          if (report.rejected.length > 0) io.stderr(`rejected tools: ${JSON.stringify(report.rejected.slice(0, 5))}\n`);
        }
      } finally {
        // The local encoder's worker threads would keep the process alive after the report.
        await embedder?.close?.();
      }
    });

  withConnection(
    program
      .command('push')
      .description('register or update tools from JSON/YAML files or folders, idempotently (what CI runs at deploy time)')
      .argument('<paths...>', 'files or folders (.json, .yaml, .yml; one document, an array, or several YAML documents per file)')
      .option('--concurrency <n>', 'documents in flight at once', integer(1, 32), 4)
      .option('--source <name>', 'the documents are every tool this source publishes: one catalog sync request (POST /v1/catalog/sync)')
      .option('--prune', 'with --source: retire the source\'s tools the documents no longer declare'),
  );
  withPushOptions(program.commands.at(-1)!)
    .addHelpText(
      'after',
      '\nNew tools are POSTed; for existing ones the registry is asked (dry-run PUT) what would change: unchanged ones are skipped,\nchanged ones PUT with If-Match on the ETag just read.\nWith --source, the folder is sent as one declaration (docs/catalog-sync.md): --dry-run prints the plan, --prune retires what\nthe source no longer declares, --wait shows indexing progress (counts, rate, ETA) until every vector is stored.\nExit codes: 0 done, 1 a document was refused or unreadable, 2 usage error or no documents, 3 token refused (stops at once),\n4 registry unreachable or unavailable, 5 --wait ended before every pushed tool was indexed.',
    )
    .action(async (paths: string[], flags: SyncFlags & { concurrency: number }) => {
      if (flags.prune && flags.source === undefined) throw new CliError('--prune needs --source: only a source\'s own tools can be pruned');
      const loaded = await loadDocuments(paths);
      if (flags.source !== undefined) await syncAndReport(io, state, { ...flags, source: flags.source }, loaded);
      else await pushAndReport(io, state, flags, loaded);
    });

  withConnection(
    program
      .command('import-mcp')
      .description('import the tools of an MCP server (stdio or streamable HTTP) into the registry')
      .option('--command <command>', 'spawn this MCP server and talk stdio, e.g. "node server.js"')
      .option('--url <url>', 'streamable HTTP endpoint of the MCP server')
      .option('--header <header>', 'HTTP header for --url, "Name: value" (repeatable)', collect)
      .option('--env <pair>', 'environment variable for --command, KEY=VALUE (repeatable)', collect)
      .option('--cwd <dir>', 'working directory for --command')
      .option('--prefix <namespace>', 'prefix every tool name, e.g. "github."', '')
      .option('--scopes <scopes>', 'scopes every imported tool requires (space or comma separated)')
      .option('--version <semver>', 'version of the imported documents (default: the server\'s version, else 1.0.0)')
      .option('--category <category>', 'category of the imported tools')
      .option('--tags <tags>', 'extra tags (comma separated); "mcp" is always added')
      .addOption(new Option('--sensitivity <level>', 'override the sensitivity inferred from annotations').choices([...SENSITIVITIES]))
      .option('--max-description <n>', 'the registry\'s MAX_DESCRIPTION_LENGTH: longer descriptions are cut (the original kept in x-mcp)', integer(16, 100_000), 1024)
      .option('--out <file>', 'write the documents to this .json/.yaml file instead of pushing'),
  );
  withPushOptions(program.commands.at(-1)!)
    .addHelpText(
      'after',
      '\nMapping: name -> prefix+name, description, inputSchema -> parameters, outputSchema -> returns,\nreadOnlyHint -> side_effects false, destructiveHint -> side_effects true (and sensitivity medium);\nthe original name, title and every annotation are kept in x-mcp (the mcp format renders them back).\nSchemas are kept as the server published them: a parameter without a description is not described,\nthe registry reports it as a warning (printed on stderr, one line each). Only what the registry refuses\nis changed (a misspelt keyword or format, an over-long description), each change listed on stderr\nwith its reason. Exit codes as for push.',
    )
    .action(
    async (
      flags: ConnectionFlags & {
        command?: string; url?: string; header?: string[]; env?: string[]; cwd?: string; prefix: string; scopes?: string; version?: string;
        category?: string; tags?: string; sensitivity?: Sensitivity; out?: string; maxDescription: number;
      } & PushFlags,
    ) => {
      if (Boolean(flags.command) === Boolean(flags.url)) throw new CliError('give exactly one of --command (stdio) or --url (streamable HTTP)');
      if (flags.version !== undefined && !semver.valid(flags.version)) throw new CliError(`--version ${flags.version} is not semver`);
      const source: McpSource = flags.command
        ? { kind: 'stdio', command: flags.command, env: Object.fromEntries((flags.env ?? []).map((pair) => [pair.split('=')[0]!, pair.slice(pair.indexOf('=') + 1)])), cwd: flags.cwd }
        : { kind: 'http', url: flags.url!, headers: Object.fromEntries((flags.header ?? []).map((h) => [h.slice(0, h.indexOf(':')).trim(), h.slice(h.indexOf(':') + 1).trim()])) };
      const { server, tools } = await listMcpTools(source);
      const version = flags.version ?? (server?.version && semver.valid(server.version) ? server.version : '1.0.0');
      io.stderr(`${tools.length} tools from MCP server ${server ? `${server.name} ${server.version}` : '(unnamed)'}\n`);
      const mapped = tools.map((tool) =>
        mapMcpTool(tool, {
          prefix: flags.prefix,
          scopes: words(flags.scopes),
          version,
          category: flags.category,
          tags: words(flags.tags),
          sensitivity: flags.sensitivity,
          maxDescription: flags.maxDescription,
          serverName: server?.name,
        }),
      );
      const changed = mapped.filter((m) => m.notes.length > 0);
      if (changed.length > 0) io.stderr(`changed ${changed.length} of ${mapped.length} tools so the registry accepts them:\n`);
      for (const { document, notes } of changed) for (const note of notes) io.stderr(`  ${document.name}: ${note}\n`);
      if (flags.out) {
        const documents = mapped.map((m) => m.document);
        const text = /\.ya?ml$/i.test(extname(flags.out)) ? toYaml(documents) : `${JSON.stringify(documents, null, 2)}\n`;
        await writeFile(flags.out, text);
        // No registry was asked: the same warnings, computed here from the written documents.
        io.stderr(warningLines(documents.map((document) => ({ name: document.name, warnings: toolWarnings(document) }))));
        io.stdout(`wrote ${documents.length} documents to ${flags.out}\n`);
        return;
      }
      await pushAndReport(io, state, flags, mapped.map((m, i) => ({ source: `mcp:${tools[i]!.name}`, document: m.document, notes: m.notes })));
    },
  );

  withConnection(
    program
      .command('discover')
      .description('ask the registry which tools fit a request and pretty-print the shortlist with scores')
      .argument('<query>', 'the request, in the user\'s words')
      .option('-k, --top-k <n>', 'shortlist size (1-10)', integer(1, 10), 3)
      .addOption(new Option('--format <format>', 'schema format').choices(['openai', 'openai-responses', 'anthropic', 'gemini', 'mcp', 'raw']).default('openai'))
      .addOption(new Option('--mode <mode>', 'retrieval legs').choices(['hybrid', 'lexical', 'vector']).default('hybrid'))
      .option('--category <category>', 'only tools of this category')
      .option('--tags <tags>', 'only tools with any of these tags (comma separated)')
      .option('--schemas', 'also print each tool\'s schema in the chosen format')
      .option('--json', 'print the raw response as JSON'),
  ).action(
    async (query: string, flags: ConnectionFlags & { topK: number; format: SchemaFormat; mode: SearchMode; category?: string; tags?: string; schemas?: boolean; json?: boolean }) => {
      const tags = words(flags.tags);
      const filters = flags.category || tags.length > 0 ? { ...(flags.category ? { category: flags.category } : {}), ...(tags.length > 0 ? { tags } : {}) } : undefined;
      const result = await clientFrom(io, flags).discover({ query, top_k: flags.topK, format: flags.format, mode: flags.mode, ...(filters ? { filters } : {}) });
      io.stdout(flags.json ? `${JSON.stringify(result, null, 2)}\n` : formatDiscovery(query, result, { schemas: flags.schemas }));
    },
  );

  program
    .command('bench')
    .description('run the benchmark (scripts/bench) through `npm run bench`; arguments after -- are passed on')
    .argument('[args...]', 'arguments for the benchmark')
    .allowUnknownOption()
    .action(async (args: string[]) => {
      const why = benchUnavailable(io.root);
      if (why) throw new CliError(why);
      state.exitCode = await runBench(io.root, args);
    });

  return program;
}

/** Runs the CLI with `argv` (without node and script); resolves the exit code. */
export async function runCli(argv: string[], overrides: Partial<CliIo> = {}): Promise<number> {
  const io = { ...processIo(), ...overrides };
  const state: State = { exitCode: 0 };
  try {
    await createProgram(io, state).parseAsync(argv, { from: 'user' });
    return state.exitCode;
  } catch (error) {
    // Help and --version exit 0; every other command-line problem is a usage error.
    if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (error instanceof RegistryError) {
      io.stderr(`error: ${error.describe()}\n`);
      return exitCodeOf(error);
    }
    io.stderr(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return error instanceof CliError ? error.exitCode : EXIT.rejected;
  }
}
