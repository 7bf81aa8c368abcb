import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import type * as Testcontainers from 'testcontainers';
import type { TestProject } from 'vitest/node';

import { ensureVectorExtension } from '../../scripts/pg-session.js';
import { fromPglite } from '../../src/db/client.js';
import { migrate, MIGRATIONS_DIR } from '../../src/db/migrate.js';
import type { ExternalPostgres } from './provided.js';

const ROOT = new URL('../../', import.meta.url);
const CACHE_DIR = join(ROOT.pathname, 'node_modules', '.cache', 'tool-registry-tests');

function packageVersion(name: string): string {
  return (JSON.parse(readFileSync(join(ROOT.pathname, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

/**
 * The migrated PGlite template: initdb plus migrations take seconds, so it is built once and kept
 * in node_modules/.cache, keyed by the migrations and the PGlite versions (a clean clone rebuilds it).
 */
async function pgliteTemplate(): Promise<string> {
  const key = createHash('sha256');
  key.update(`${packageVersion('@electric-sql/pglite')} ${packageVersion('@electric-sql/pglite-pgvector')}\n`);
  for (const file of readdirSync(MIGRATIONS_DIR).sort()) key.update(`${file}\n`).update(readFileSync(join(MIGRATIONS_DIR, file)));
  const path = join(CACHE_DIR, `pglite-template-${key.digest('hex').slice(0, 16)}.tar`);
  if (existsSync(path)) return path;

  const client = await PGlite.create({ extensions: { vector } });
  try {
    await migrate(fromPglite(client));
    const dump = await client.dumpDataDir('none');
    mkdirSync(CACHE_DIR, { recursive: true });
    const partial = `${path}.${process.pid}.partial`;
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    renameSync(partial, path);
    // Templates of older migrations are dead weight (40 MB each); spare recent ones, which a
    // concurrent run on another checkout state may still be reading.
    for (const file of readdirSync(CACHE_DIR)) {
      const other = join(CACHE_DIR, file);
      if (/^pglite-template-\w+\.tar$/.test(file) && other !== path && Date.now() - statSync(other).mtimeMs > 3_600_000) rmSync(other, { force: true });
    }
  } finally {
    await client.close();
  }
  return path;
}

/** Docker is worth asking testcontainers about only when a socket or DOCKER_HOST exists. */
function dockerHint(): boolean {
  return Boolean(process.env.DOCKER_HOST) || existsSync('/var/run/docker.sock') || existsSync(join(process.env.HOME ?? '/', '.docker', 'run', 'docker.sock'));
}


/**
 * A throwaway PostgreSQL with pgvector and a streaming replica from scripts/postgres.sh (it installs
 * and builds what is missing on a Debian machine). It serves until its stdin closes.
 */
async function provisionedPostgres(): Promise<{ provided: ExternalPostgres; stop: () => Promise<void> }> {
  const script = join(ROOT.pathname, 'scripts', 'postgres.sh');
  const child = spawn(script, ['--replica', '--fast'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const urls = new Map<string, string>();
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  for await (const line of createInterface({ input: child.stdout })) {
    const [key, ...value] = line.split('=');
    if (key) urls.set(key, value.join('='));
    if (urls.has('TEST_DATABASE_READ_URL')) break;
  }
  const url = urls.get('TEST_DATABASE_URL');
  const readUrl = urls.get('TEST_DATABASE_READ_URL');
  if (!url || !readUrl) {
    const code = await exited;
    const reason = stderr.trim().split('\n')[0] ?? `exit ${code}`;
    return { provided: { url: null, readUrl: null, source: `scripts/postgres.sh failed: ${reason}` }, stop: async () => undefined };
  }
  return {
    provided: { url, readUrl, source: 'scripts/postgres.sh (TEST_POSTGRES=provision)' },
    stop: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

/**
 * The external PostgreSQL leg: TEST_DATABASE_URL (with TEST_DATABASE_READ_URL for its replica),
 * else scripts/postgres.sh when TEST_POSTGRES=provision, else a pgvector container when Docker works.
 */
async function externalPostgres(): Promise<{ provided: ExternalPostgres; stop: () => Promise<void> }> {
  const none = async () => undefined;
  const url = process.env.TEST_DATABASE_URL;
  if (url) {
    await ensureVectorExtension(url);
    return { provided: { url, readUrl: process.env.TEST_DATABASE_READ_URL ?? null, source: 'TEST_DATABASE_URL' }, stop: none };
  }
  if (process.env.TEST_POSTGRES === 'provision') return provisionedPostgres();
  const skipped = (why: string) => ({ provided: { url: null, readUrl: null, source: why }, stop: none });
  if (!dockerHint()) {
    return skipped('no Docker engine (no DOCKER_HOST, no docker.sock), TEST_DATABASE_URL is unset and TEST_POSTGRES is not "provision"');
  }
  // Loaded lazily (the type import above is erased): only where a container runtime may exist.
  let testcontainers: typeof Testcontainers;
  try {
    testcontainers = await import('testcontainers');
  } catch (error) {
    return skipped(`testcontainers failed to load on Node ${process.version}: ${(error as Error).message}`);
  }
  try {
    await testcontainers.getContainerRuntimeClient();
  } catch (error) {
    return skipped(`no working container runtime: ${(error as Error).message}`);
  }
  const container = await new testcontainers.GenericContainer('pgvector/pgvector:pg17')
    .withEnvironment({ POSTGRES_PASSWORD: 'test', POSTGRES_DB: 'registry' })
    .withExposedPorts(5432)
    .withWaitStrategy(testcontainers.Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start();
  const containerUrl = `postgres://postgres:test@${container.getHost()}:${container.getMappedPort(5432)}/registry`;
  await ensureVectorExtension(containerUrl);
  return { provided: { url: containerUrl, readUrl: null, source: 'testcontainers pgvector/pgvector:pg17' }, stop: async () => void (await container.stop()) };
}

/** Vitest global setup: builds the PGlite template and finds (or starts) an external PostgreSQL. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  project.provide('pgliteTemplate', await pgliteTemplate());
  const external = await externalPostgres();
  project.provide('externalPostgres', external.provided);
  if (external.provided.url === null) {
    console.warn(`\n[tests] PostgreSQL leg SKIPPED: ${external.provided.source}. Set TEST_DATABASE_URL or run where Docker works to include it.\n`);
  } else {
    console.info(`\n[tests] PostgreSQL leg runs on ${external.provided.source}\n`);
  }
  return external.stop;
}
