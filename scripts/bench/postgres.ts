/**
 * Native PostgreSQL for the benchmark: the same throwaway cluster the tests use
 * (`scripts/postgres.sh` in serve mode, durability on), or the server of DATABASE_URL; one fresh
 * database per catalog and server, so runs never see each other's rows.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import { ensureVectorExtension, withClient } from '../pg-session.js';
import { Child } from './processes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** A PostgreSQL server: the URL of its maintenance database, and how to stop it (if started here). */
export interface PostgresServer {
  url: string;
  stop: () => Promise<void>;
}

/** Uses `url` when given; otherwise starts `scripts/postgres.sh` (no --fast) and reads its URL. */
export async function startPostgres(url: string | undefined): Promise<PostgresServer> {
  if (url) return { url, stop: async () => undefined };
  const child = new Child(spawn('bash', [`${ROOT}scripts/postgres.sh`], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] }));
  const match = await child.waitFor(/^TEST_DATABASE_URL=(\S+)$/m, 600_000);
  return {
    url: match[1]!,
    // Serve mode ends when its stdin closes; a signal would do too, but this lets it clean up in order.
    stop: async () => {
      child.process.stdin?.end();
      await child.stop(30_000);
    },
  };
}

/** The URL of database `name` on the server of `url`. */
export function databaseUrl(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Creates (or re-creates) database `name` with the vector extension; returns its URL. */
export async function freshDatabase(server: PostgresServer, name: string): Promise<string> {
  if (!/^[a-z][a-z0-9_]{0,62}$/.test(name)) throw new Error(`bad database name ${name}`);
  await withClient(server.url, async (admin) => {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`create database ${name}`);
  });
  const url = databaseUrl(server.url, name);
  await ensureVectorExtension(url);
  return url;
}

/** Drops database `name` (after the service using it stopped). */
export async function dropDatabase(server: PostgresServer, name: string): Promise<void> {
  await withClient(server.url, (admin) => admin.query(`drop database if exists ${name} with (force)`));
}

/**
 * VACUUM ANALYZE of the whole database at `url`: what autovacuum does within a minute or so of a deploy
 * (autovacuum_naptime; inserts trigger it since PostgreSQL 13). The legs measure that steady state,
 * not the first minute after a bulk registration: one-row estimates from the empty tables, and
 * index-only scans that visit the heap because the visibility map is not set yet.
 */
export async function vacuumAnalyze(url: string): Promise<void> {
  await withClient(url, (client) => client.query('vacuum analyze'));
}

/**
 * Whether the database at `url` has a valid HNSW index over tool vectors. The indexer builds it
 * (CONCURRENTLY) once the largest tenant reaches VECTOR_INDEX_MIN_TOOLS; until then, and while a
 * build interrupted by a restart is redone, discovery computes every distance.
 */
export async function vectorIndexReady(url: string): Promise<boolean> {
  const { rows } = await withClient(url, (client) =>
    client.query<{ ready: boolean }>(
      `select exists (select 1 from pg_index i join pg_class c on c.oid = i.indexrelid join pg_am am on am.oid = c.relam
                      where i.indrelid = 'tool_embeddings'::regclass and am.amname = 'hnsw' and i.indisvalid) as ready`,
    ),
  );
  return rows[0]!.ready;
}

/**
 * Active tools without a card vector for `model`. Every database of a run is fresh, so any stored
 * vector was written by the service under test: no need for the service's own staleness stamp,
 * which a baseline checkout computes differently (or from columns it lacks).
 */
export async function toolsWithoutVectors(url: string, model: string): Promise<number> {
  const { rows } = await withClient(url, (client) =>
    client.query<{ n: number }>(
      `select count(*)::int as n from tools t
       where t.status = 'active' and not exists (select 1 from tool_embeddings e where e.tool_id = t.id and e.model = $1 and e.ord = 0)`,
      [model],
    ),
  );
  return rows[0]!.n;
}
