import { Type } from 'typebox';

/** The shapes of GET /v1/audit: the route validates and documents them, the service's types derive from them. */

/** Filters and page size of an audit listing. */
export const AuditListQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }),
  before: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'only entries with a smaller id (pagination)' })),
  action: Type.Optional(Type.Enum(['publish', 'restore', 'retire', 'authorize', 'call', 'call_result', 'approve_alias', 'reject_alias'])),
  tool: Type.Optional(Type.String({ maxLength: 64 })),
});

/** One audit record on the wire. */
export const AuditEntry = Type.Object({
  id: Type.Integer(),
  at: Type.String({ format: 'date-time' }),
  actor: Type.Union([Type.String(), Type.Null()]),
  action: Type.String({ description: 'publish, restore, retire, authorize, call (a decision of POST /v1/call or MCP call_tool), call_result (its upstream outcome, in details), approve_alias or reject_alias' }),
  tool: Type.Object({ name: Type.String(), version: Type.Union([Type.String(), Type.Null()]) }),
  decision: Type.Union([Type.Enum(['allow', 'deny']), Type.Null()]),
  reasons: Type.Union([Type.Array(Type.Unknown()), Type.Null()]),
  discovery_id: Type.Union([Type.String(), Type.Null()]),
  details: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], { description: 'call_result: upstream, latency_ms, outcome and the upstream error if any' })),
});
