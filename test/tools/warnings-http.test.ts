import { describe, expect, it } from 'vitest';

import { call, useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

const ADMIN = 'registry:admin';

interface Warning {
  code: string;
  pointer: string;
  message: string;
}

/** A real-world MCP schema: a nested required property and an optional one without descriptions, an unknown keyword and format. */
const realParameters = {
  type: 'object',
  properties: {
    groupBy: {
      type: 'array',
      description: 'Facets to group by.',
      items: { type: 'object', properties: { facet: { type: 'string' }, limit: { type: 'integer' } }, required: ['facet'] },
    },
    path: { type: 'string', format: 'path', description: 'Where to look.' },
    sort: { type: 'string', optional: true, description: 'Sort order.' },
  },
  required: ['groupBy'],
};

const expectedWarnings = [
  { code: 'parameter_description_missing', pointer: '/parameters/properties/groupBy/items/properties/facet/description' },
  { code: 'optional_parameter_description_missing', pointer: '/parameters/properties/groupBy/items/properties/limit/description' },
  { code: 'unknown_format', pointer: '/parameters/properties/path/format' },
  { code: 'unknown_keyword', pointer: '/parameters/properties/sort/optional' },
];

const codesAndPointers = (warnings: Warning[]) => warnings.map(({ code, pointer }) => ({ code, pointer }));

/** Warnings through REST on every database leg: POST, PUT, dry runs, the publisher's GET, and the tenant setting that refuses chosen codes. */
forEachDatabase((db) => {
  const t = useApp(db);
  const publisher = (tenant: string, scopes = [PUBLISH]) => token({ tenant, scopes, sub: 'publisher-1' });
  const realTool = (overrides: Record<string, unknown> = {}) => toolDocument({ name: 'search_issues', parameters: realParameters, ...overrides });

  describe('warnings on publish', () => {
    it('accepts a nested required property without a description and reports it with every other warning, on POST, its dry run and PUT', async () => {
      const pub = await publisher(uniqueTenant());
      const dry = await call(t.app, 'POST', '/v1/tools?dry_run=true', { token: pub, body: realTool() });
      expect(dry.statusCode, dry.body).toBe(200);
      expect(codesAndPointers(dry.json().warnings)).toEqual(expectedWarnings);

      const created = await call(t.app, 'POST', '/v1/tools', { token: pub, body: realTool() });
      expect(created.statusCode, created.body).toBe(201);
      expect(codesAndPointers(created.json().warnings)).toEqual(expectedWarnings);
      expect(created.json().warnings[0].message).toMatch(/required parameter 'facet' has no description/);
      // Stored as published: nothing was filled in.
      expect(created.json().parameters).toEqual(realParameters);

      const described = structuredClone(realParameters);
      Object.assign(described.properties.groupBy.items.properties.facet, { description: 'The facet.' });
      const put = await call(t.app, 'PUT', '/v1/tools/search_issues', { token: pub, body: realTool({ version: '1.1.0', parameters: described }) });
      expect(put.statusCode, put.body).toBe(200);
      expect(codesAndPointers(put.json().warnings)).toEqual(expectedWarnings.slice(1));
      const unchanged = await call(t.app, 'PUT', '/v1/tools/search_issues?dry_run=true', { token: pub, body: realTool({ version: '1.1.0', parameters: described }) });
      expect(unchanged.json()).toMatchObject({ outcome: 'unchanged' });
      expect(codesAndPointers(unchanged.json().warnings)).toEqual(expectedWarnings.slice(1));
    });

    it('reports an empty list for a clean tool, and still refuses typos of keywords and formats and a missing top-level description', async () => {
      const pub = await publisher(uniqueTenant());
      const clean = await call(t.app, 'POST', '/v1/tools', { token: pub, body: toolDocument() });
      expect(clean.json().warnings).toEqual([]);
      const typos = await call(t.app, 'POST', '/v1/tools', {
        token: pub,
        body: toolDocument({ name: 'typos', parameters: { type: 'object', properties: { a: { type: 'string', maxLenght: 3, format: 'emial' } } } }),
      });
      expect(typos.statusCode).toBe(400);
      expect(typos.json().error.details.map((d: Warning) => d.pointer).sort()).toEqual(['/parameters/properties/a/format', '/parameters/properties/a/maxLenght']);
      const noDescription = await call(t.app, 'POST', '/v1/tools', { token: pub, body: toolDocument({ name: 'no_description', description: undefined }) });
      expect(noDescription.statusCode).toBe(400);
      expect(noDescription.json().error.details.map((d: Warning) => d.pointer)).toEqual(['/description']);
    });

    it('shows a stored tool\'s warnings to publishers only, computed from the stored schema', async () => {
      const tenant = uniqueTenant();
      const pub = await publisher(tenant);
      expect((await call(t.app, 'POST', '/v1/tools', { token: pub, body: realTool() })).statusCode).toBe(201);
      const view = await call(t.app, 'GET', '/v1/tools/search_issues', { token: pub });
      expect(codesAndPointers(view.json().warnings)).toEqual(expectedWarnings);
      const reader = await call(t.app, 'GET', '/v1/tools/search_issues', { token: await token({ tenant, scopes: [] }) });
      expect(reader.statusCode).toBe(200);
      expect(reader.json()).not.toHaveProperty('warnings');
    });
  });

  describe('GET and PUT /v1/settings', () => {
    it('starts empty, is changed by administrators only, and is read by publishers', async () => {
      const tenant = uniqueTenant();
      const admin = await publisher(tenant, [ADMIN]);
      const pub = await publisher(tenant);
      expect((await call(t.app, 'GET', '/v1/settings', { token: pub })).json()).toEqual({ warnings_as_errors: [], updated_at: null, updated_by: null });
      expect((await call(t.app, 'GET', '/v1/settings', { token: await token({ tenant, scopes: [] }) })).statusCode).toBe(403);
      expect((await call(t.app, 'GET', '/v1/settings')).statusCode).toBe(401);
      const byPublisher = await call(t.app, 'PUT', '/v1/settings', { token: pub, body: { warnings_as_errors: ['unknown_keyword'] } });
      expect(byPublisher.statusCode).toBe(403);
      expect(byPublisher.json().error.message).toMatch(/registry:admin/);

      const set = await call(t.app, 'PUT', '/v1/settings', { token: admin, body: { warnings_as_errors: ['unknown_keyword', 'parameter_description_missing', 'unknown_keyword'] } });
      expect(set.statusCode, set.body).toBe(200);
      expect(set.json()).toMatchObject({ warnings_as_errors: ['parameter_description_missing', 'unknown_keyword'], updated_by: 'publisher-1' });
      expect((await call(t.app, 'GET', '/v1/settings', { token: pub })).json().warnings_as_errors).toEqual(['parameter_description_missing', 'unknown_keyword']);
    });

    it('refuses an unknown code naming it, and a body of the wrong shape naming the field', async () => {
      const admin = await publisher(uniqueTenant(), [ADMIN]);
      const unknown = await call(t.app, 'PUT', '/v1/settings', { token: admin, body: { warnings_as_errors: ['unknown_format', 'missing_description'] } });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json().error.message).toMatch(/'missing_description'/);
      expect(unknown.json().error.details).toEqual([{ pointer: '/warnings_as_errors/1', message: "unknown warning code 'missing_description'", in: 'body' }]);
      const shape = await call(t.app, 'PUT', '/v1/settings', { token: admin, body: { warnings_as_errors: { unknown_format: true } } });
      expect(shape.statusCode).toBe(400);
      expect(shape.json().error.details[0].pointer).toBe('/warnings_as_errors');
      expect((await call(t.app, 'PUT', '/v1/settings', { token: admin, body: {} })).json().error.details[0].pointer).toBe('/warnings_as_errors');
    });

    it('is per tenant: one tenant\'s setting neither shows in nor applies to another', async () => {
      const [strict, lenient] = [uniqueTenant(), uniqueTenant()];
      const admin = await publisher(strict, [ADMIN]);
      expect((await call(t.app, 'PUT', '/v1/settings', { token: admin, body: { warnings_as_errors: ['parameter_description_missing'] } })).statusCode).toBe(200);
      const other = await publisher(lenient, [ADMIN, PUBLISH]);
      expect((await call(t.app, 'GET', '/v1/settings', { token: other })).json().warnings_as_errors).toEqual([]);
      expect((await call(t.app, 'POST', '/v1/tools', { token: other, body: realTool() })).statusCode).toBe(201);
      expect((await call(t.app, 'POST', '/v1/tools', { token: await publisher(strict), body: realTool() })).statusCode).toBe(400);
    });

    it('turns the chosen warnings into a 400 naming pointer and code, on POST, dry runs and PUT, and leaves the others warnings', async () => {
      const tenant = uniqueTenant();
      const admin = await publisher(tenant, [ADMIN]);
      const pub = await publisher(tenant);
      expect((await call(t.app, 'POST', '/v1/tools', { token: pub, body: realTool({ name: 'stored_before' }) })).statusCode).toBe(201);
      expect((await call(t.app, 'PUT', '/v1/settings', { token: admin, body: { warnings_as_errors: ['parameter_description_missing'] } })).statusCode).toBe(200);

      for (const url of ['/v1/tools', '/v1/tools?dry_run=true']) {
        const refused = await call(t.app, 'POST', url, { token: pub, body: realTool() });
        expect(refused.statusCode, url).toBe(400);
        expect(refused.json().error.message).toMatch(/warnings_as_errors: parameter_description_missing/);
        expect(refused.json().error.details).toEqual([
          { pointer: '/parameters/properties/groupBy/items/properties/facet/description', message: expect.stringMatching(/^parameter_description_missing: required parameter 'facet'/), in: 'body' },
        ]);
      }
      // A changed version is held to the setting; re-sending the stored content stays a no-op.
      expect((await call(t.app, 'PUT', '/v1/tools/stored_before', { token: pub, body: realTool({ name: 'stored_before', version: '1.1.0' }) })).statusCode).toBe(400);
      expect((await call(t.app, 'PUT', '/v1/tools/stored_before', { token: pub, body: realTool({ name: 'stored_before' }) })).statusCode).toBe(200);

      const described = structuredClone(realParameters);
      Object.assign(described.properties.groupBy.items.properties.facet, { description: 'The facet.' });
      const accepted = await call(t.app, 'POST', '/v1/tools', { token: pub, body: realTool({ parameters: described }) });
      expect(accepted.statusCode, accepted.body).toBe(201);
      expect(codesAndPointers(accepted.json().warnings)).toEqual(expectedWarnings.slice(1));
    });
  });
});
