import { fileURLToPath } from 'node:url';

import { buildApp } from '../src/app.js';
import { createVerifier } from '../src/auth/verifier.js';
import { loadConfig } from '../src/config.js';
import type { Database } from '../src/db/client.js';

/** Where the generated OpenAPI document is checked in. */
export const OPENAPI_PATH = fileURLToPath(new URL('../openapi/openapi.json', import.meta.url));

/**
 * The configuration the document is generated with: default limits (they appear in the schemas),
 * no embedder, a throwaway secret (no token is ever verified). Never read from the environment,
 * so the output does not depend on who runs the script.
 */
const OPENAPI_ENV = { JWT_SECRET: 'openapi-generation-only-never-verifies-a-token', EMBEDDING_PROVIDER: 'none', LOG_LEVEL: 'silent' };

/** The OpenAPI document of the app built on `database`, as stable pretty JSON with a trailing newline. */
export async function openApiDocument(database: Database): Promise<string> {
  const config = loadConfig(OPENAPI_ENV);
  const app = await buildApp({ config, database, ownsDatabase: false, verify: createVerifier(config.jwt) });
  try {
    await app.ready();
    return `${JSON.stringify(app.swagger(), null, 2)}\n`;
  } finally {
    await app.close();
  }
}
