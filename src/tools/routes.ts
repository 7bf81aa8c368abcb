import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Ajv } from 'ajv';
import type { FastifyInstance, FastifyReply, FastifySchemaCompiler } from 'fastify';
import { type Static, Type } from 'typebox';

import { isPublisher, PUBLISH_SCOPE } from '../auth/principal.js';
import type { ToolRow } from '../db/schema.js';
import { AppError } from '../errors.js';
import { errorResponses } from '../http/schemas.js';
import { rejectDuplicateKeys } from '../http/strict-json.js';
import { type DocumentLimits, ToolCard, toolDocumentSchema, ToolName } from './model.js';
import { type LearnedAlias, ToolViewReply, toolWarningsField } from './schemas.js';
import { type ToolService, type WriteOutcome } from './service.js';
import { textProblems, ToolValidator } from './validation.js';
import { documentOf, etagOf, type IndexStatus, toCard, toView } from './views.js';
import { type ToolWarning, toolWarnings } from './warnings.js';

interface ToolRoutesOptions {
  tools: ToolService;
  /** A tool's learned aliases as publishers see them (learning owns them; shown on the tool's view). */
  learnedAliases: (toolId: number) => Promise<Static<typeof LearnedAlias>[]>;
  limits: DocumentLimits;
  /** Whether a tool's vectors are current for the configured embedder (the publisher's view). */
  indexStatus: (toolId: number) => Promise<IndexStatus>;
}

const DryRunQuery = Type.Object({
  dry_run: Type.Boolean({ default: false, description: 'run every check of the real call and store nothing: its 4xx, or 200 with what would happen' }),
});

const DryRunResult = Type.Object(
  {
    dry_run: Type.Literal(true),
    outcome: Type.Enum(['created', 'updated', 'restored', 'unchanged'], { description: 'what the real call would do' }),
    changes: Type.Array(Type.String(), { description: 'top-level fields the call would change (empty when creating or unchanged)' }),
    etag: Type.String({ description: 'the ETag the tool would have' }),
    warnings: toolWarningsField,
    // ToolViewReply without its $id: a route may reference one $id once.
    tool: Type.Object(ToolViewReply.properties, { additionalProperties: true }),
  },
  { description: 'a dry run\'s answer: nothing was stored' },
);

/** The body of a dry run's 200: what the real call would do, and the tool as it would be stored. */
function dryRunReply(outcome: WriteOutcome, changes: string[], row: ToolRow, warnings: ToolWarning[]) {
  return { dry_run: true as const, outcome, changes, etag: etagOf(row), warnings, tool: toView(row) };
}

/**
 * Route-level validation of everything but the tool document (plain Ajv with Fastify's defaults).
 * The document's schema documents the route; the document itself is checked by the one check
 * every door shares (`ToolValidator.check`, every rule and every error at once), in the handler.
 */
function compilerFor(): FastifySchemaCompiler<unknown> {
  const ajv = new Ajv({ coerceTypes: 'array', useDefaults: true, removeAdditional: true, allErrors: false, strict: false });
  return ({ schema, httpPart }) => (httpPart === 'body' ? (data: unknown) => ({ value: data }) : ajv.compile(schema as object));
}

const NameParams = Type.Object({ name: ToolName });
const IfMatch = Type.Object({ 'if-match': Type.Optional(Type.String()) });

/** /v1/tools: publish, read, list and retire tools. */
export default async function toolRoutes(scope: FastifyInstance, options: ToolRoutesOptions): Promise<void> {
  const { tools } = options;
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const validatorCompiler = compilerFor();
  const documents = new ToolValidator(options.limits);
  const documentBody = toolDocumentSchema(options.limits);
  const publish = app.requireScope(PUBLISH_SCOPE);
  // A tool document must mean one thing to every parser: duplicate keys and rounded numbers are a 400.
  rejectDuplicateKeys(scope, { exactNumbers: true });

  app.post(
    '/v1/tools',
    {
      onRequest: publish,
      validatorCompiler,
      schema: {
        summary: 'Register a tool in the caller\'s tenant',
        tags: ['tools'],
        querystring: DryRunQuery,
        body: documentBody,
        response: { 201: ToolViewReply, 200: DryRunResult, ...errorResponses(400, 401, 403, 409, 413) },
      },
    },
    async (request, reply) => {
      const { dry_run: dryRun } = request.query;
      const { row, etag, warnings } = await tools.register(request.principal, documents.check(request.body), { dryRun });
      if (dryRun) return reply.code(200).send(dryRunReply('created', [], row, warnings));
      return reply.code(201).header('etag', etag).header('location', `/v1/tools/${row.name}`).send({ ...toView(row), warnings });
    },
  );

  app.put(
    '/v1/tools/:name',
    {
      onRequest: publish,
      validatorCompiler,
      schema: {
        summary: 'Publish a new version of a tool (identical content is a no-op)',
        tags: ['tools'],
        params: NameParams,
        headers: IfMatch,
        querystring: DryRunQuery,
        body: documentBody,
        response: { 200: Type.Union([ToolViewReply, DryRunResult]), ...errorResponses(400, 401, 403, 404, 409, 412, 413) },
      },
    },
    async (request, reply) => {
      const { name } = request.params;
      const doc = documents.check(request.body, name);
      const { dry_run: dryRun } = request.query;
      const { row, etag, outcome, changes, warnings } = await tools.replace(request.principal, name, doc, request.headers['if-match'], { dryRun });
      if (dryRun) return reply.send(dryRunReply(outcome, changes, row, warnings));
      return reply.header('etag', etag).send({ ...toView(row), warnings });
    },
  );

  app.get(
    '/v1/tools/:name',
    {
      schema: {
        summary: 'The tool with its full schema, if the caller may see it',
        tags: ['tools'],
        params: NameParams,
        response: { 200: ToolViewReply, 304: Type.Null(), ...errorResponses(401, 404) },
      },
    },
    async (request, reply) => {
      const row = await tools.get(request.principal, request.params.name);
      const etag = etagOf(row);
      reply.header('etag', etag);
      // A 304 has no body: send(null), which its schema's type asks for, would write "null" with a
      // content-type and content-length.
      if (request.headers['if-none-match'] === etag) return (reply as FastifyReply).code(304).send();
      // Learned aliases are publishers' material: never shown to callers who merely use the tool.
      if (!isPublisher(request.principal)) return toView(row);
      const [learned, indexStatus] = await Promise.all([options.learnedAliases(row.id), options.indexStatus(row.id)]);
      // Computed on read from the stored document: a stored tool shows the current rules' warnings.
      return { ...toView(row), index_status: indexStatus, learned_aliases: learned, warnings: toolWarnings(documentOf(row)) };
    },
  );

  app.get(
    '/v1/tools/:name/versions',
    {
      onRequest: publish,
      schema: {
        summary: 'Version history of a tool (publishers)',
        tags: ['tools'],
        params: NameParams,
        response: {
          200: Type.Object({
            versions: Type.Array(
              Type.Object({ revision: Type.Integer(), version: Type.String(), created_at: Type.String(), created_by: Type.Union([Type.String(), Type.Null()]), document: Type.Record(Type.String(), Type.Unknown()) }),
            ),
          }),
          ...errorResponses(401, 403, 404),
        },
      },
    },
    async (request) => {
      const versions = await tools.history(request.principal, request.params.name);
      return {
        versions: versions.map((v) => ({ revision: v.revision, version: v.version, created_at: v.createdAt.toISOString(), created_by: v.createdBy, document: v.document })),
      };
    },
  );

  app.get(
    '/v1/tools',
    {
      schema: {
        summary: 'Cards of the tools the caller may see, by name, paginated',
        tags: ['tools'],
        querystring: Type.Object({
          limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
          cursor: Type.Optional(Type.String({ maxLength: 200 })),
          include_retired: Type.Boolean({ default: false, description: 'publishers only' }),
          category: Type.Optional(Type.String({ maxLength: 64 })),
          tags: Type.Optional(Type.String({ maxLength: 1000, description: 'comma-separated; a tool matches when it has any of them' })),
        }),
        response: { 200: Type.Object({ tools: Type.Array(ToolCard), next_cursor: Type.Union([Type.String(), Type.Null()]) }), ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const { query } = request;
      // Filters reach SQL parameters: text PostgreSQL cannot store (NUL) is refused here, not by the database.
      const details = textProblems({ category: query.category, tags: query.tags, cursor: query.cursor }).map((detail) => ({ ...detail, in: 'querystring' as const }));
      if (details.length > 0) throw new AppError('validation_failed', 'request querystring is invalid', details);
      const { rows, nextCursor } = await tools.list(request.principal, {
        limit: query.limit,
        cursor: query.cursor,
        includeRetired: query.include_retired,
        category: query.category,
        tags: query.tags?.split(',').map((t) => t.trim()).filter(Boolean),
      });
      return { tools: rows.map(toCard), next_cursor: nextCursor };
    },
  );

  app.delete(
    '/v1/tools/:name',
    {
      onRequest: publish,
      schema: {
        summary: 'Retire a tool: it leaves discovery and authorize denies it; history is kept',
        tags: ['tools'],
        params: NameParams,
        headers: IfMatch,
        response: { 200: ToolViewReply, ...errorResponses(401, 403, 404, 412) },
      },
    },
    async (request, reply) => {
      const row = await tools.retire(request.principal, request.params.name, request.headers['if-match']);
      return reply.header('etag', etagOf(row)).send(toView(row));
    },
  );
}
