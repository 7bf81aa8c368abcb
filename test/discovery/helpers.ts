import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';

import { buildApp } from '../../src/app.js';
import type { Embedder } from '../../src/embedding/provider.js';
import { testConfig, testDependencies, type TestEnv } from '../helpers/app.js';
import type { DatabaseHandle } from '../helpers/databases.js';

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
