import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll } from 'vitest';

import { type AppDependencies, buildApp } from '../../src/app.js';
import { createVerifier } from '../../src/auth/verifier.js';
import { type Config, loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/client.js';
import type { DatabaseHandle } from './databases.js';
import { TEST_SECRET } from './tokens.js';

export type TestEnv = Record<string, string | undefined>;

/** The configuration tests run with: HS256 test secret, no embedder, silent logs; `env` overrides. */
export function testConfig(env: TestEnv = {}): Config {
  const asymmetric = Boolean(env.JWT_PUBLIC_KEY || env.JWKS_URL);
  return loadConfig({ JWT_SECRET: asymmetric ? undefined : TEST_SECRET, EMBEDDING_PROVIDER: 'none', LOG_LEVEL: 'silent', ...env });
}

/** The one place where tests assemble the app's dependencies. */
export function testDependencies(config: Config, database: Database): AppDependencies {
  return { config, database, ownsDatabase: false, verify: createVerifier(config.jwt) };
}

/** Builds the app (never listening) on `database`; the caller closes it. */
export async function buildTestApp(options: { database: Database; env?: TestEnv }): Promise<FastifyInstance> {
  const app = await buildApp(testDependencies(testConfig(options.env), options.database));
  await app.ready();
  return app;
}

/** An app on the current leg's database, built before the suite's tests and closed after them. */
export function useApp(db: DatabaseHandle, env: TestEnv = {}): { readonly app: FastifyInstance } {
  let app: FastifyInstance | undefined;
  beforeAll(async () => {
    app = await buildTestApp({ database: db.database, env });
  });
  afterAll(async () => {
    await app?.close();
    app = undefined;
  });
  return {
    get app() {
      if (!app) throw new Error('the test app is not built yet');
      return app;
    },
  };
}

/** Authorization header for a bearer token. */
export function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

/** `app.inject` with a bearer token and a JSON body. */
export function call(
  app: FastifyInstance,
  method: NonNullable<InjectOptions['method']>,
  url: string,
  options: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  return app.inject({
    method,
    url,
    headers: { ...(options.token ? bearer(options.token) : {}), ...options.headers },
    ...(options.body === undefined ? {} : { payload: options.body as InjectOptions['payload'] }),
  });
}
