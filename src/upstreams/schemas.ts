import { Type } from 'typebox';

import { AuthorizeBody } from '../authorize/schemas.js';
import { Scope, SENSITIVITIES, Sensitivity } from '../tools/model.js';

/** The shapes of /v1/upstreams and /v1/call: the routes validate and document them, the services' types derive from them. */

/** An upstream's name: the prefix of its tools' names (`<name>_<tool>`), so short and name-safe. */
const UpstreamName = Type.String({ pattern: '^[a-zA-Z][a-zA-Z0-9-]{0,31}$', description: "the upstream's name; its tools are named <name>_<tool>" });

/** What a publisher registers. */
export const UpstreamBody = Type.Object(
  {
    name: UpstreamName,
    url: Type.String({ minLength: 1, maxLength: 2048, description: 'the streamable HTTP endpoint; must be under UPSTREAM_ALLOWED_URLS' }),
    headers: Type.Optional(
      Type.Record(Type.String({ pattern: '^[!#$%&\'*+.^_`|~0-9A-Za-z-]{1,128}$' }), Type.String({ maxLength: 8192, pattern: '^[^\\r\\n\\u0000]*$' }), {
        maxProperties: 32,
        description: 'sent to this upstream only (credentials); stored encrypted, never returned',
      }),
    ),
    required_scopes: Type.Optional(Type.Array(Scope, { maxItems: 32, description: 'scopes every tool of the upstream requires' })),
    sensitivity: Type.Optional(Type.Enum([...SENSITIVITIES], { description: 'every tool\'s sensitivity; default: from its annotations' })),
    side_effects: Type.Optional(Type.Boolean({ description: 'every tool\'s side_effects; default: from its annotations' })),
  },
  { additionalProperties: false },
);

/** One tool a sync could not take, and why. */
const SyncError = Type.Object({ tool: Type.Union([Type.String(), Type.Null()], { description: 'the upstream tool, or null when the upstream failed' }), message: Type.String() });

/** What a sync did. */
export const SyncResult = Type.Object({
  added: Type.Array(Type.String()),
  changed: Type.Array(Type.String()),
  retired: Type.Array(Type.String()),
  errors: Type.Array(SyncError),
});

/** An upstream as publishers see it: never its headers. */
export const UpstreamView = Type.Object({
  name: Type.String(),
  url: Type.String(),
  status: Type.Enum(['pending', 'ok', 'degraded'], { description: 'degraded: the last sync failed; its last known tools stay discoverable and calls fail with 502/503' }),
  tools: Type.Integer({ description: 'active tools it serves' }),
  synced_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'the last successful sync' }),
  last_error: Type.Union([Type.String(), Type.Null()]),
  required_scopes: Type.Array(Type.String()),
  sensitivity: Type.Union([Sensitivity, Type.Null()]),
  side_effects: Type.Union([Type.Boolean(), Type.Null()]),
  has_headers: Type.Boolean({ description: 'whether headers are stored (their names and values are never shown)' }),
  created_at: Type.String({ format: 'date-time' }),
});

/** A registration or a sync's answer: the upstream and what the sync did. */
export const UpstreamSynced = Type.Object({ ...UpstreamView.properties, sync: SyncResult });

export const UpstreamList = Type.Object({ upstreams: Type.Array(UpstreamView) });

export const UpstreamParams = Type.Object({ name: UpstreamName });

/** POST /v1/call: /v1/authorize's body without a version pin (the upstream runs what it runs). */
export const CallBody = Type.Object(
  { tool: AuthorizeBody.properties.tool, arguments: AuthorizeBody.properties.arguments, discovery_id: AuthorizeBody.properties.discovery_id },
  { additionalProperties: false },
);

/** An allowed call's answer: the upstream's MCP CallToolResult as it sent it. */
export const CallResponse = Type.Object({
  decision: Type.Literal('allow'),
  result: Type.Object({}, { additionalProperties: true, description: "the upstream's MCP CallToolResult (content, structuredContent, isError)" }),
});
