import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Ajv } from 'ajv';
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import type { Static } from 'typebox';

import { PUBLISH_SCOPE } from '../auth/principal.js';
import { errorResponses } from '../http/schemas.js';
import { rejectDuplicateKeys } from '../http/strict-json.js';
import { CatalogSyncBody, CatalogSyncResult, IndexProgress, IndexStatusQuery } from './schemas.js';
import type { CatalogSync } from './service.js';

export type IndexProgressBody = Static<typeof IndexProgress>;

export interface CatalogRoutesOptions {
  sync: CatalogSync;
  /** The body limit of a sync (CATALOG_SYNC_MAX_BYTES). */
  bodyLimit: number;
  /** Index progress of the tenant's (or one source's) active tools (the embedding side owns it). */
  indexProgress: (tenantId: string, source: string | undefined) => Promise<IndexProgressBody>;
}

/**
 * The sync body is validated without coercion: `"prune": "yes"` or a lone object for `tools` is a
 * 400 naming the field, not a guess (the app-wide Ajv coerces query strings).
 */
const strictBody = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: false, strict: false });
const bodyCompiler: FastifySchemaCompiler<unknown> = ({ schema }) => strictBody.compile(schema as object);

/** /v1/catalog: declarative sync of a source's tools, and how far their indexing is. */
export default async function catalogRoutes(scope: FastifyInstance, options: CatalogRoutesOptions): Promise<void> {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const publish = app.requireScope(PUBLISH_SCOPE);
  // The tools it carries must mean one thing to every parser, as on POST /v1/tools.
  rejectDuplicateKeys(scope, { exactNumbers: true });

  app.post(
    '/v1/catalog/sync',
    {
      onRequest: publish,
      bodyLimit: options.bodyLimit,
      validatorCompiler: bodyCompiler,
      schema: {
        summary: 'Declare every tool a source publishes: new ones created, changed ones versioned, unchanged ones left alone, absent ones retired with prune',
        tags: ['tools'],
        body: CatalogSyncBody,
        response: { 200: CatalogSyncResult, ...errorResponses(400, 401, 403, 413, 415, 429) },
      },
    },
    async (request) => options.sync.sync(request.principal, request.body),
  );

  app.get(
    '/v1/catalog/index-status',
    {
      onRequest: publish,
      schema: {
        summary: 'How many of the tenant\'s active tools (or one source\'s) are searchable by meaning, the backlog and an ETA',
        tags: ['tools'],
        querystring: IndexStatusQuery,
        response: { 200: IndexProgress, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => options.indexProgress(request.principal.tenant, request.query.source),
  );
}
