// @ts-check
/**
 * Worker thread of the embedded database (see openEmbedded in client.ts): opens PGlite on
 * `workerData.dataDir` and serves it over the wire protocol on the Unix socket
 * `workerData.socket`, so the WASM backend runs beside the service's event loop rather than on it.
 * Answers `{ ready: true }` once listening; on `{ stop: true }` it closes the server and the
 * database (PGlite flushes its files) and answers `{ stopped: true }`. Plain JavaScript so it runs
 * without a TypeScript loader whichever way the service was started.
 */
import { parentPort, workerData } from 'node:worker_threads';

import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';

import { servePgliteOverWire } from './pglite-wire.mjs';

const port = parentPort;
if (!port) throw new Error('pglite-thread.mjs runs as a worker thread only');

/** @type {{ dataDir: string, socket: string, maxConnections: number }} */
const { dataDir, socket, maxConnections } = workerData;
const db = await PGlite.create({ dataDir, extensions: { vector } });
const server = servePgliteOverWire(db, { path: socket, maxConnections });
await server.start();
port.postMessage({ ready: true });

port.on('message', async (/** @type {{ stop?: boolean }} */ message) => {
  if (!message.stop) return;
  await server.stop();
  await db.close();
  port.postMessage({ stopped: true });
  port.close();
});
