import { runCli } from './program.js';

/* The `tool-registry` binary: commands live in program.ts, which runs in-process under test. */
const code = await runCli(process.argv.slice(2));
// `serve` keeps the event loop alive; every other command exits with its code when done.
if (code !== 0) process.exit(code);
process.exitCode = code;
