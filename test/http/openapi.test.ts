import { existsSync, readFileSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { fromPglite } from '../../src/db/client.js';
import { OPENAPI_PATH, openApiDocument } from '../../scripts/openapi-document.js';
import { clonePglite } from '../helpers/databases.js';

/** The checked-in openapi/openapi.json must be what the route schemas generate (in-process PGlite). */
describe('openapi/openapi.json', () => {
  let client: Awaited<ReturnType<typeof clonePglite>>;
  let generated: string;
  beforeAll(async () => {
    client = await clonePglite();
    generated = await openApiDocument(fromPglite(client));
  });
  afterAll(async () => client.close());

  it('is generated identically twice (stable output)', async () => {
    expect(await openApiDocument(fromPglite(client))).toBe(generated);
  });

  it('matches the route schemas; run `npm run openapi` when this fails', () => {
    expect(existsSync(OPENAPI_PATH), 'openapi/openapi.json is missing: run `npm run openapi`').toBe(true);
    const checkedIn = readFileSync(OPENAPI_PATH, 'utf8');
    const [old, now] = [checkedIn.split('\n'), generated.split('\n')];
    const line = old.findIndex((text, i) => text !== now[i]);
    const where = line === -1 ? `${old.length} vs ${now.length} lines` : `first difference at line ${line + 1}: ${JSON.stringify(old[line])} vs ${JSON.stringify(now[line])}`;
    expect(checkedIn === generated, `openapi/openapi.json drifted from the route schemas (${where}): run \`npm run openapi\` and commit the result`).toBe(true);
  });

  it('documents every error response with the shared error schema', () => {
    const document = JSON.parse(generated);
    const post = document.paths['/v1/tools'].post;
    for (const status of ['400', '401', '403', '409', '413']) expect(post.responses[status].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorResponse');
  });
});
