import { existsSync, readFileSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { OPENAPI_PATH, openApiDocument } from '../../scripts/openapi-document.js';
import { fromPglite } from '../../src/db/client.js';
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

  it('gives every operation a unique operationId, never requires a defaulted field, and names a server', () => {
    const document = JSON.parse(generated) as { servers: unknown[]; paths: Record<string, Record<string, { operationId?: string; parameters?: { required: boolean; schema: object }[] }>> };
    const ids = Object.values(document.paths).flatMap((item) => Object.values(item).map((operation) => operation.operationId));
    expect(ids.every((id) => typeof id === 'string' && /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.servers.length).toBeGreaterThan(0);
    const stack: unknown[] = [document];
    while (stack.length > 0) {
      const node = stack.pop();
      if (typeof node !== 'object' || node === null) continue;
      const schema = node as { required?: unknown; properties?: Record<string, { default?: unknown }>; schema?: { default?: unknown } };
      if (Array.isArray(schema.required) && schema.properties) {
        for (const name of schema.required) expect(schema.properties[name as string], `required ${String(name)} has a default`).not.toHaveProperty('default');
      }
      if (schema.required === true && schema.schema) expect(schema.schema).not.toHaveProperty('default');
      stack.push(...Object.values(node));
    }
  });

  it('documents every error response with the shared error schema', () => {
    const document = JSON.parse(generated);
    const post = document.paths['/v1/tools'].post;
    for (const status of ['400', '401', '403', '409', '413']) expect(post.responses[status].content['application/json'].schema.$ref).toBe('#/components/schemas/ErrorResponse');
  });
});
