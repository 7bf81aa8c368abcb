import type { AddressInfo } from 'node:net';

import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';

import { RegistryClient, type RegistryClientOptions } from '../../clients/typescript/src/index.js';
import type { Database } from '../../src/db/client.js';
import { buildTestApp, type TestEnv } from '../helpers/app.js';
import { PUBLISH, token } from '../helpers/tokens.js';

/** A test app listening on 127.0.0.1 (random port): the SDK and the CLI talk real HTTP to it. */
export interface LiveRegistry {
  readonly app: FastifyInstance;
  readonly url: string;
  /** A token of `tenant` holding `scopes` (default: publish plus every example catalog scope). */
  token(tenant: string, scopes?: string[]): Promise<string>;
  /** An SDK client for `tenant` with `scopes`. */
  client(tenant: string, scopes?: string[], options?: Partial<RegistryClientOptions>): Promise<RegistryClient>;
}

export const CATALOG_SCOPES = [
  'billing:read', 'billing:write', 'support:read', 'support:write', 'devops:read', 'devops:deploy', 'devops:admin', 'crm:read', 'crm:write', 'crm:admin',
];

/** Builds the app on `database()` before the suite, listens, and closes it after. */
export function useLiveRegistry(database: () => Database, env: TestEnv = {}): LiveRegistry {
  let app: FastifyInstance | undefined;
  let url = '';
  beforeAll(async () => {
    app = await buildTestApp({ database: database(), env });
    await app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
    app = undefined;
  });
  const mint = (tenant: string, scopes: string[] = [PUBLISH, ...CATALOG_SCOPES]) => token({ tenant, scopes, sub: 'ci-bot' });
  return {
    get app() {
      if (!app) throw new Error('the live registry is not started yet');
      return app;
    },
    get url() {
      return url;
    },
    token: mint,
    client: async (tenant, scopes, options = {}) => new RegistryClient({ baseUrl: url, token: await mint(tenant, scopes), retry: { retries: 0 }, ...options }),
  };
}
