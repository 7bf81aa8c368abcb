/**
 * Child process of the benchmark: serves a PGlite data directory over the PostgreSQL wire
 * protocol (the "external database" leg). Prints `ready <port>` once listening; exits on SIGTERM.
 * Usage: tsx scripts/bench/pglite-socket-server.ts <dataDir> <maxConnections>
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';

import { servePgliteOverWire } from '../../src/db/pglite-wire.mjs';

/* eslint-disable no-console -- a script's output is its interface */

const [dataDir = 'memory://', maxConnections = '8'] = process.argv.slice(2);
const db = await PGlite.create({ dataDir, extensions: { vector } });
const server = servePgliteOverWire(db, { port: 0, host: '127.0.0.1', maxConnections: Number(maxConnections) });
server.addEventListener('listening', (event) => console.log(`ready ${(event as CustomEvent<{ port: number }>).detail.port}`));
await server.start();
const stop = async () => {
  await server.stop();
  await db.close();
  process.exit(0);
};
process.once('SIGTERM', () => void stop());
process.once('SIGINT', () => void stop());
