import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';

import { buildApp } from '../../src/app.js';
import { LocalEmbedder } from '../../src/embedding/local.js';
import type { Embedder } from '../../src/embedding/provider.js';
import { call, testConfig, testDependencies, type TestEnv } from '../helpers/app.js';
import type { DatabaseHandle } from '../helpers/databases.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

/** An app with an embedder on the current leg; `flush` waits until every tool has vectors. */
export function useDiscoveryApp(db: DatabaseHandle, embedder: () => Embedder | undefined, env: TestEnv = {}) {
  let app: FastifyInstance | undefined;
  beforeAll(async () => {
    app = await buildApp({ ...testDependencies(testConfig(env), db.database), embedder: embedder() });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
    app = undefined;
  });
  return {
    get app(): FastifyInstance {
      if (!app) throw new Error('the test app is not built yet');
      return app;
    },
    async flush(): Promise<void> {
      await app?.indexer?.flush();
    },
  };
}

export interface DiscoverResponse {
  discovery_id: string;
  tools: { name: string; version: string; score: number; card: Record<string, unknown>; schema: Record<string, unknown> }[];
  tokens: { shortlist: number; catalog: number };
  low_confidence: boolean;
  search_mode: string;
}

// The real encoder, loaded once per test file and shared by its legs.
let encoder: LocalEmbedder | undefined;

/**
 * `documents` published on the current leg with the real offline encoder, and discovery as a
 * scope-less caller of that tenant: the setup of the ranking tests that need real vectors.
 */
export function useEncoderCatalog(db: DatabaseHandle, tenantPrefix: string, documents: readonly Record<string, unknown>[]) {
  beforeAll(async () => {
    encoder ??= await LocalEmbedder.load();
  }, 60_000);
  // A generous embedding budget: on a loaded machine a timed-out query embedding would turn the search lexical.
  const ctx = useDiscoveryApp(db, () => encoder, { EMBEDDING_TIMEOUT_MS: '30000' });
  const tenant = uniqueTenant(tenantPrefix);
  let caller = '';
  beforeAll(async () => {
    const publisher = await token({ tenant, scopes: [PUBLISH] });
    for (const body of documents) expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body })).statusCode).toBe(201);
    await ctx.flush();
    caller = await token({ tenant, scopes: [] });
  }, 60_000);
  return {
    /** POST /v1/discover with `body` (top_k 3 unless given); expects a 200. */
    async discover(body: Record<string, unknown>): Promise<DiscoverResponse> {
      const response = await call(ctx.app, 'POST', '/v1/discover', { token: caller, body: { top_k: 3, ...body } });
      expect(response.statusCode, response.body).toBe(200);
      return response.json<DiscoverResponse>();
    },
  };
}
