import './provided.js';

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, inject } from 'vitest';

import { withClient } from '../../scripts/pg-session.js';
import { type Database, fromPglite, openPostgres, rowsOf } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { servePgliteOverWire } from '../../src/db/pglite-wire.mjs';

/**
 * The database legs every database-backed test runs on. Each test file gets its own clean,
 * migrated database per leg:
 * - `pglite`: PGlite in-process, cloned from the template the global setup built;
 * - `pglite-socket`: a clone served over the PostgreSQL wire protocol, reached through `pg`;
 * - `postgres`: real PostgreSQL with pgvector (TEST_DATABASE_URL or a testcontainers container),
 *   one schema per file; skipped, with the reason in the suite title, when neither is available.
 */
export type LegName = 'pglite' | 'pglite-socket' | 'postgres';

/** An open test database and how to dispose of it. */
export interface TestDatabase {
  leg: LegName;
  database: Database;
  /** The connection URL on wire legs (pglite-socket, postgres). */
  url: string | undefined;
  /** Opens a second, independent pool on the same database (wire legs only). */
  connect(poolSize?: number): Promise<Database>;
  close(): Promise<void>;
}

export interface Leg {
  name: LegName;
  title: string;
  /** Why the leg cannot run here, or undefined when it can. */
  skip: string | undefined;
  open(): Promise<TestDatabase>;
}

// pglite-socket serves 8 connections (see below); test pools stay under that.
const SOCKET_MAX_CONNECTIONS = 8;
const TEST_POOL_SIZE = 4;

let template: Blob | undefined;

/** A fresh in-process PGlite holding the migrated template. */
export async function clonePglite(): Promise<PGlite> {
  template ??= new Blob([readFileSync(inject('pgliteTemplate'))]);
  return PGlite.create({ loadDataDir: template, extensions: { vector } });
}

async function openInProcess(): Promise<TestDatabase> {
  const client = await clonePglite();
  const database = fromPglite(client);
  return {
    leg: 'pglite',
    database,
    url: undefined,
    connect: () => Promise.reject(new Error('the in-process leg has no wire protocol')),
    close: () => client.close(),
  };
}

/** Pools opened on one wire database, closed together with it. */
function poolsOn(url: string): { connect(poolSize?: number): Promise<Database>; close(): Promise<void> } {
  const pools: Database[] = [];
  return {
    connect: async (poolSize = TEST_POOL_SIZE) => {
      const database = await openPostgres(url, poolSize);
      pools.push(database);
      return database;
    },
    close: async () => {
      for (const pool of pools) await pool.close();
    },
  };
}

/** PGlite served over the wire (see src/db/pglite-wire.mjs), reached through pg. */
async function openSocket(): Promise<TestDatabase> {
  const client = await clonePglite();
  const server = servePgliteOverWire(client, { host: '127.0.0.1', port: 0, maxConnections: SOCKET_MAX_CONNECTIONS });
  await server.start();
  const url = `postgres://postgres:postgres@${server.getServerConn()}/postgres`;
  const pools = poolsOn(url);
  const database = await pools.connect();
  return {
    leg: 'pglite-socket',
    database,
    url,
    connect: pools.connect,
    close: async () => {
      await pools.close();
      await server.stop();
      await client.close();
    },
  };
}

function withSearchPath(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('options', `-c search_path=${schema},public`);
  return parsed.toString();
}

/** A private schema in the external PostgreSQL (pgvector's types stay in public), migrated. */
async function openExternal(baseUrl: string): Promise<TestDatabase> {
  const schema = `test_${randomBytes(6).toString('hex')}`;
  await withClient(baseUrl, (admin) => admin.query(`create schema ${schema}`));
  const url = withSearchPath(baseUrl, schema);
  const pools = poolsOn(url);
  const database = await pools.connect();
  // PostgreSQL honours the `options` startup parameter; a server that ignores it would make every
  // file share one schema, so say so instead of testing something else than intended.
  const [row] = await rowsOf<{ schema: string }>(database.db.execute('select current_schema() as schema'));
  if (row?.schema !== schema) {
    await database.close();
    throw new Error(`TEST_DATABASE_URL ignored the search_path startup option (current schema ${row?.schema}); use a real PostgreSQL server`);
  }
  await migrate(database);
  return {
    leg: 'postgres',
    database,
    url,
    connect: pools.connect,
    close: async () => {
      await pools.close();
      await withClient(baseUrl, (admin) => admin.query(`drop schema ${schema} cascade`));
    },
  };
}

/** Every leg, with the reason when one cannot run here. */
export function databaseLegs(): Leg[] {
  const external = inject('externalPostgres');
  return [
    { name: 'pglite', title: 'on PGlite in-process', skip: undefined, open: openInProcess },
    { name: 'pglite-socket', title: 'on PGlite over the wire (pglite-socket + pg)', skip: undefined, open: openSocket },
    {
      name: 'postgres',
      title: `on PostgreSQL + pgvector (${external.source})`,
      skip: external.url === null ? external.source : undefined,
      open: () => openExternal(external.url!),
    },
  ];
}

/** Access to the current leg's database inside a `forEachDatabase` suite (valid from beforeAll on). */
export interface DatabaseHandle {
  readonly leg: LegName;
  readonly current: TestDatabase;
  readonly database: Database;
}

/**
 * Opens `leg`'s database before the enclosing describe's tests and closes it after them; the
 * handle reaches it from beforeAll on.
 */
function openFor(leg: Pick<Leg, 'name' | 'open'>): DatabaseHandle {
  let opened: TestDatabase | undefined;
  beforeAll(async () => {
    opened = await leg.open();
  });
  afterAll(async () => {
    await opened?.close();
    opened = undefined;
  });
  return {
    leg: leg.name,
    get current() {
      if (!opened) throw new Error(`database for leg ${leg.name} is not open (use it from beforeAll or a test)`);
      return opened;
    },
    get database() {
      return this.current.database;
    },
  };
}

/**
 * Declares `suite` once per database leg, each in its own describe with a clean database opened
 * before and closed after it. A leg that cannot run is declared as a skipped describe whose
 * title says why, so the skip shows in every report (never silent). `only` limits the legs.
 */
export function forEachDatabase(suite: (db: DatabaseHandle) => void, only?: readonly LegName[]): void {
  for (const leg of databaseLegs()) {
    // A check that needs what one engine alone has (another backend to terminate) is declared on its legs only.
    if (only && !only.includes(leg.name)) continue;
    if (leg.skip !== undefined) {
      describe.skip(`${leg.title}: SKIPPED, ${leg.skip}`, () => suite(openFor(leg)));
      continue;
    }
    describe(leg.title, () => suite(openFor(leg)));
  }
}

/**
 * A clean in-process PGlite for the enclosing describe, for suites whose checks never reach the
 * database (token checks, socket handling): one leg is enough there.
 */
export function inProcessDatabase(): DatabaseHandle {
  return openFor({ name: 'pglite', open: openInProcess });
}
