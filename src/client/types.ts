import type { Static } from 'typebox';

import type { DiscoverResult, DiscoveredTool, SearchMode } from '../discovery/service.js';
import type { AuthorizeInput, Decision, Reason, ReasonCode } from '../authorize/service.js';
import type { Format } from '../discovery/formats.js';
import type { ErrorCode } from '../errors.js';
import type { ErrorResponse, TokenCosts, ToolCard as ToolCardSchema, ToolView as ToolViewSchema } from '../http/schemas.js';
import type { ToolDocumentInput } from '../tools/document.js';

/**
 * Wire types of the registry API. They are derived from the service's own route schemas
 * (`Static<>` of the TypeBox schemas, or the service's result types) through type-only imports,
 * so the SDK carries no server code at run time and cannot drift from the routes at compile time.
 */

/** A tool document as a publisher sends it (`x-` extension fields allowed). */
export type ToolDocument = ToolDocumentInput & { [extension: `x-${string}`]: unknown };

/** The light card of a tool, as listings and discovery show it. */
export type ToolCard = Static<typeof ToolCardSchema>;

/** The stored tool with its full schema, status, revision and token cost per format. */
export type ToolView = Static<typeof ToolViewSchema> & { [extension: `x-${string}`]: unknown };

/** Prompt tokens of a tool's full schema per format. */
export type ToolTokenCosts = Static<typeof TokenCosts>;

/** The error body of every failed request. */
export type ErrorBody = Static<typeof ErrorResponse>;
export type ErrorDetail = ErrorBody['error']['details'][number];

/** Error codes the service sends; the client adds its own for failures without a response. */
export type ServerErrorCode = ErrorCode;
export type ClientErrorCode = 'network_error' | 'timeout' | 'invalid_response';

export type SchemaFormat = Format;
export type { SearchMode };

/** A stored tool and its ETag (send it back as `ifMatch` for optimistic concurrency). */
export interface ToolResult {
  tool: ToolView;
  etag: string;
}

export interface ListToolsParams {
  /** 1..200, default 50. */
  limit?: number;
  cursor?: string;
  /** Publishers only: include retired tools. */
  includeRetired?: boolean;
  category?: string;
  /** A tool matches when it has any of these tags. */
  tags?: string[];
}

export interface ToolPage {
  tools: ToolCard[];
  next_cursor: string | null;
}

export interface ToolVersion {
  revision: number;
  version: string;
  created_at: string;
  created_by: string | null;
  document: Record<string, unknown>;
}

export interface DiscoverRequest {
  /** The user's request, in their words. */
  query: string;
  /** 1..10, default 3. */
  top_k?: number;
  /** Schema format of the shortlist, default `openai`. */
  format?: SchemaFormat;
  /** Retrieval legs (extension), default `hybrid`. */
  mode?: SearchMode;
  filters?: { category?: string; tags?: string[] };
}

export type DiscoverResponse = DiscoverResult;
export type DiscoveredToolResult = DiscoveredTool;

export interface ListDiscoveriesParams {
  limit?: number;
  /** ISO date-time: only discoveries before it (pagination). */
  before?: string;
  /** Only empty or low-confidence shortlists. */
  poor?: boolean;
}

export interface DiscoveryRecord {
  discovery_id: string;
  at: string;
  subject: string | null;
  query: string;
  shortlist: { name: string; version: string; score: number }[];
  search_mode: string;
  low_confidence: boolean;
  latency_ms: number;
}

/** POST /v1/authorize body (the service's AuthorizeInput). */
export type AuthorizeRequest = AuthorizeInput;

/** Why a call was denied: a stable code, a message, and a JSON pointer for argument failures. */
export type AuthorizeReason = Reason;
export type AuthorizeReasonCode = ReasonCode;

/** The gateway's decision; a deny is a normal result, not an error. */
export type AuthorizeResponse = Decision;

export interface AuditParams {
  /** 1..500, default 100. */
  limit?: number;
  /** Only entries with a smaller id: pass the previous page's `next_before`. */
  before?: number;
  action?: 'publish' | 'restore' | 'retire' | 'authorize';
  tool?: string;
}

/** One audit record: a publish, restore, retirement or authorize decision. */
export interface AuditRecord {
  id: number;
  at: string;
  actor: string | null;
  action: string;
  tool: { name: string; version: string | null };
  decision: 'allow' | 'deny' | null;
  reasons: unknown[] | null;
  discovery_id: string | null;
}

export interface AuditPage {
  entries: AuditRecord[];
  /** Pass as `before` for the next page; null on the last page. */
  next_before: number | null;
}

export interface Readiness {
  status: string;
  checks?: Record<string, unknown>;
  [extra: string]: unknown;
}
