import { fileURLToPath } from 'node:url';

import { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';

import { loadDocuments, type LoadedDocument } from '../../src/cli/documents.js';
import { call, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

const CATALOG = fileURLToPath(new URL('../../examples/catalog/', import.meta.url));

/** Ajv in strict mode (unknown keywords, types, tuples, required), formats known: the strictest reading. */
function strictAjv(schema: Record<string, unknown>) {
  const ajv = typeof schema.$schema === 'string' && schema.$schema.includes('draft-07') ? new Ajv({ strict: true, allErrors: true }) : new Ajv2020({ strict: true, allErrors: true });
  addFormats.default(ajv);
  return ajv;
}

let loaded: LoadedDocument[] = [];
beforeAll(async () => {
  loaded = await loadDocuments([CATALOG]);
});

describe('examples/catalog', () => {
  it('loads every document, with unique names', () => {
    expect(loaded.length).toBeGreaterThanOrEqual(36);
    for (const item of loaded) expect(item.error, item.source).toBeUndefined();
    const names = loaded.map((item) => item.document!.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('has schemas that compile in Ajv strict mode, every property described', () => {
    for (const { document, source } of loaded) {
      for (const schema of [document!.parameters, document!.returns].filter((s) => s !== undefined)) {
        expect(() => strictAjv(schema).compile(schema), `${source} (${document!.name})`).not.toThrow();
      }
      const properties = (document!.parameters.properties ?? {}) as Record<string, { description?: unknown }>;
      for (const [name, property] of Object.entries(properties)) expect(typeof property.description, `${document!.name}.${name}`).toBe('string');
    }
  });
});

/** Every shipped example publishes through HTTP, unchanged, on every database leg. */
forEachDatabase((db) => {
  const t = useApp(db);
  it('publishes every example as written: 201, and the stored schema is the file\'s', async () => {
    const publisher = await token({ tenant: uniqueTenant('examples'), scopes: [PUBLISH] });
    for (const { document, source } of loaded) {
      const res = await call(t.app, 'POST', '/v1/tools', { token: publisher, body: document });
      expect(res.statusCode, `${source}: ${res.body}`).toBe(201);
      expect(res.json().parameters, source).toEqual(document!.parameters);
    }
  });
});
