import { Type } from 'typebox';

import { ToolName } from '../tools/model.js';

/**
 * Who owns the tools of a sync: a repository, a service, a team. `upstream:` is reserved for the
 * tools upstream MCP servers serve.
 */
export const SOURCE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$';
export const RESERVED_SOURCE_PREFIX = 'upstream:';

/** The most tools one sync may declare (the body limit usually binds first). */
export const MAX_SYNC_TOOLS = 20_000;

const Source = Type.String({ pattern: SOURCE_PATTERN, description: 'the owner of these tools (a repository or service name); `upstream:` names are reserved' });

export const CatalogSyncBody = Type.Object(
  {
    source: Source,
    tools: Type.Array(
      // Each document is checked tool by tool (its problems are reported under its name); only its
      // name must be valid here, since that is what the outcome and prune go by.
      Type.Object({ name: ToolName }, { additionalProperties: true, description: 'a tool document (as POST /v1/tools takes)' }),
      { maxItems: MAX_SYNC_TOOLS, description: 'every tool the source publishes, names unique' },
    ),
    prune: Type.Boolean({ default: false, description: 'retire the source\'s active tools this list does not name' }),
    dry_run: Type.Boolean({ default: false, description: 'run every check and store nothing: the answer is the plan' }),
  },
  { additionalProperties: false },
);

const Names = (description: string) => Type.Array(Type.String(), { description });

export const CatalogSyncError = Type.Object({
  name: Type.String(),
  error: Type.String(),
  details: Type.Array(Type.Object({ pointer: Type.String({ description: 'JSON pointer into the tool document' }), message: Type.String() })),
});

export const CatalogSyncResult = Type.Object({
  source: Type.String(),
  dry_run: Type.Boolean(),
  created: Names('new tools, and retired ones restored (what a dry run would create)'),
  updated: Names('tools published as a new version'),
  unchanged: Names('tools whose content is already stored: no write, no re-embedding'),
  retired: Names('with prune: the source\'s active tools absent from the body'),
  errors: Type.Array(CatalogSyncError, { description: 'tools the registry refused, each with its reasons; they keep their stored version' }),
});

export const IndexStatusQuery = Type.Object({
  source: Type.Optional(Type.String({ pattern: SOURCE_PATTERN, description: 'only this sync source\'s tools' })),
});

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Rate = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });

export const IndexProgress = Type.Object({
  model: Type.Union([Type.String(), Type.Null()], { description: 'the embedding model; null: no embedder (lexical search only, nothing to wait for)' }),
  active: Count('active tools counted'),
  indexed: Count('searchable by meaning'),
  pending: Count('waiting for vectors'),
  failed: Count('their last embedding attempt failed (retried)'),
  backlog: Count('active tools waiting for vectors in the whole service (the indexer works through them in order)'),
  texts_per_second: Rate('texts encoded per second of indexing, recently; null before the first batch'),
  tools_per_second: Rate('tools indexed per second of indexing, recently; null before the first batch'),
  eta_seconds: Rate('time until the service-wide backlog is indexed at the recent rate (an upper bound for these tools); null while unknown'),
});
