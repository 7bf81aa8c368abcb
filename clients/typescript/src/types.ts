/**
 * Wire types of the registry API, written out so the package carries no server code. The
 * registry's own test suite checks them against the service's tool model and route schemas at compile time
 * (`test/client/types-match.test.ts` in the service repository), so they cannot drift unnoticed.
 */

/** A JSON Schema (draft 2020-12 or draft-07), as stored and sent to models. */
export type JsonSchema = { [keyword: string]: unknown };

/** A parameters schema: the root is always an object. */
export type ObjectSchema = JsonSchema & { type: 'object'; properties?: { [name: string]: object }; required?: string[] };

/** The tool-definition formats discovery renders schemas in. */
export type SchemaFormat = 'openai' | 'openai-responses' | 'anthropic' | 'gemini' | 'mcp' | 'raw';

/** Retrieval legs discovery ranks with. */
export type SearchMode = 'hybrid' | 'lexical' | 'vector';

/** OpenAI Chat Completions function tool; `strict` is true only when the schema meets strict mode. */
export interface OpenAiTool {
  type: 'function';
  function: { name: string; description: string; parameters: ObjectSchema; strict?: boolean };
}

/** OpenAI Responses API function tool; `strict` is always said (the API defaults it to true). */
export interface OpenAiResponsesTool {
  type: 'function';
  name: string;
  description: string;
  parameters: ObjectSchema;
  strict: boolean;
}

/** Anthropic Messages API tool. */
export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: ObjectSchema;
}

/** Gemini function declaration (JSON Schema variant). */
export interface GeminiFunctionDeclaration {
  name: string;
  description: string;
  parametersJsonSchema: ObjectSchema;
  responseJsonSchema?: JsonSchema;
}

/** MCP `Tool`, with the hints the registry knows and those an imported tool came with. */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: ObjectSchema;
  outputSchema?: ObjectSchema;
  annotations: { title: string; readOnlyHint: boolean; destructiveHint: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
}

/** The registry's own view: name, description, parameters and returns. */
export interface RawTool {
  name: string;
  description: string;
  parameters: ObjectSchema;
  returns?: JsonSchema;
}

/** The rendered schema of each format: `discover({ format })` returns this type for its tools. */
export interface SchemaByFormat {
  openai: OpenAiTool;
  'openai-responses': OpenAiResponsesTool;
  anthropic: AnthropicTool;
  gemini: GeminiFunctionDeclaration;
  mcp: McpTool;
  raw: RawTool;
}

/** Prompt tokens (o200k) of a tool's full schema per format. */
export type ToolTokenCosts = Record<SchemaFormat, number>;

/** One argument-level rule checked by /v1/authorize. */
export interface PolicyRule {
  id?: string;
  when: { pointer: string; op: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'not_in' | 'exists' | 'missing'; value?: unknown }[];
  require_scopes?: string[];
  deny?: true;
  message?: string;
}

/** A tool document as a publisher sends it (`x-` extension fields allowed). */
export interface ToolDocument {
  name: string;
  version: string;
  description: string;
  summary?: string;
  not_for?: string;
  aliases?: string[];
  examples?: string[];
  tags?: string[];
  category?: string;
  required_scopes?: string[];
  sensitivity?: 'low' | 'medium' | 'high';
  side_effects?: boolean;
  parameters: JsonSchema;
  returns?: JsonSchema;
  policy?: PolicyRule[];
  [extension: `x-${string}`]: unknown;
}

/** The light card of a tool, as listings and discovery show it. */
export interface ToolCard {
  name: string;
  version: string;
  status: 'active' | 'retired';
  summary: string;
  not_for: string | null;
  aliases: string[];
  examples: string[];
  tags: string[];
  category: string | null;
  required_scopes: string[];
  sensitivity: 'low' | 'medium' | 'high';
  side_effects: boolean;
  tokens: ToolTokenCosts;
  updated_at: string;
}

/** What the registry learned from calls discovery missed (publishers only). */
export interface LearnedAlias {
  id: number;
  query: string;
  misses: number;
  active: boolean;
  first_seen: string;
  last_seen: string;
  [field: string]: unknown;
}

/** Whether a tool is searchable by meaning yet: its vectors are current, pending, or failed (retried). */
export type IndexStatus = 'pending' | 'indexed' | 'failed';

/** Stable codes of publish warnings (a tenant may refuse chosen ones: PUT /v1/settings). */
export type ToolWarningCode = 'parameter_description_missing' | 'optional_parameter_description_missing' | 'unknown_keyword' | 'unknown_format';

/** What makes a stored tool harder to find or call: the tool is stored regardless. */
export interface ToolWarning {
  code: ToolWarningCode;
  /** JSON pointer into the tool document. */
  pointer: string;
  message: string;
}

/** The stored tool with its full schema, status, revision and token cost per format. */
export interface ToolView extends ToolCard {
  description: string;
  parameters: JsonSchema;
  returns: JsonSchema | null;
  policy: PolicyRule[];
  revision: number;
  created_at: string;
  /** The catalog sync source that owns the tool; null: published tool by tool. */
  source?: string | null;
  /** Publishers only. */
  learned_aliases?: LearnedAlias[];
  /** Publishers only. */
  index_status?: IndexStatus;
  /** Publishers only (and every publish response): sorted by pointer, at most 100. */
  warnings?: ToolWarning[];
  [extension: `x-${string}`]: unknown;
}

/** One validation problem: where (a JSON pointer) and what. */
export interface ErrorDetail {
  pointer: string;
  message: string;
  in?: string;
}

/** Error codes the service sends. */
export type ServerErrorCode =
  | 'bad_request'
  | 'validation_failed'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'precondition_failed'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'bad_gateway'
  | 'unavailable'
  | 'internal';

/** Codes of failures without a usable response. */
export type ClientErrorCode = 'network_error' | 'timeout' | 'invalid_response';

/** The error body of every failed request. */
export interface ErrorBody {
  error: { code: string; message: string; details: ErrorDetail[]; request_id: string };
}

/** A stored tool and its ETag (send it back as `ifMatch` for optimistic concurrency). */
export interface ToolResult {
  tool: ToolView;
  etag: string;
}

/** What a write did, or would do on a dry run. */
export type WriteOutcome = 'created' | 'updated' | 'restored' | 'unchanged';

/** A dry run's answer (`?dry_run=true`): nothing was stored. */
export interface DryRunResult {
  dry_run: true;
  outcome: WriteOutcome;
  /** Top-level fields the call would change (empty when creating or unchanged). */
  changes: string[];
  /** The ETag the tool would have. */
  etag: string;
  /** What makes the tool harder to find or call. */
  warnings: ToolWarning[];
  tool: ToolView;
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

export interface DiscoverRequest<F extends SchemaFormat = SchemaFormat> {
  /** The user's request, in their words. */
  query: string;
  /** 1..10, default 3. */
  top_k?: number;
  /** Schema format of the shortlist, default `openai`. */
  format?: F;
  /**
   * `openai` and `openai-responses` only: each schema rewritten into OpenAI's strict subset and
   * sent with `strict: true` (optional properties become required and nullable; `authorize` reads
   * their `null` as absent). A schema with no strict form comes as usual, with `strict_fallback`.
   */
  strict?: F extends 'openai' | 'openai-responses' ? boolean : never;
  /** Retrieval legs (extension), default `hybrid`. */
  mode?: SearchMode;
  filters?: { category?: string; tags?: string[] };
}

/** One shortlisted tool; `schema` is typed by the requested format. */
export interface DiscoveredTool<F extends SchemaFormat = SchemaFormat> {
  name: string;
  version: string;
  score: number;
  card: ToolCard;
  schema: SchemaByFormat[F];
  /** `strict` was asked and this schema has no strict form: why (the schema is the usual rendering). */
  strict_fallback?: string;
}

export interface DiscoverResponse<F extends SchemaFormat = SchemaFormat> {
  discovery_id: string;
  tools: DiscoveredTool<F>[];
  tokens: { shortlist: number; catalog: number };
  low_confidence: boolean;
  search_mode: SearchMode;
  [extension: string]: unknown;
}

export interface ListDiscoveriesParams {
  limit?: number;
  /** ISO date-time: only discoveries before it (pagination). */
  before?: string;
  /** Only empty or low-confidence shortlists. */
  poor?: boolean;
}

/** One page of GET /v1/discoveries. */
export interface DiscoveriesPage {
  discoveries: DiscoveryRecord[];
  /** Pass as `before` for the next page; null on the last. */
  next_before: string | null;
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

/** POST /v1/authorize body. */
export interface AuthorizeRequest {
  tool: string;
  version?: string;
  arguments: Record<string, unknown>;
  discovery_id?: string;
}

/** Why a call was denied: a stable code, a message, and a JSON pointer for argument failures. */
export interface AuthorizeReason {
  code: string;
  message: string;
  pointer?: string;
}

/** The gateway's decision; a deny is a normal result, not an error. */
export interface AuthorizeResponse {
  decision: 'allow' | 'deny';
  reasons: AuthorizeReason[];
  tool: { name: string; version: string | null };
}

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
  [field: string]: unknown;
}

export interface AuditPage {
  entries: AuditRecord[];
  /** Pass as `before` for the next page; null on the last page. */
  next_before: number | null;
}

/** POST /v1/catalog/sync: every tool a source publishes. */
export interface CatalogSyncRequest {
  /** The owner of these tools: a repository or service name (`upstream:` names are reserved). */
  source: string;
  tools: ToolDocument[];
  /** Retire the source's active tools this list does not name. */
  prune?: boolean;
  /** Run every check and store nothing: the answer is the plan. */
  dry_run?: boolean;
}

/** A tool a sync could not write: it keeps its stored version. */
export interface CatalogSyncError {
  name: string;
  error: string;
  details: ErrorDetail[];
}

/** What a catalog sync did (or, on a dry run, would do), by tool name. */
export interface CatalogSyncResult {
  source: string;
  dry_run: boolean;
  /** New tools, and retired ones restored. */
  created: string[];
  updated: string[];
  /** Already stored as declared: no write, no re-embedding. */
  unchanged: string[];
  /** With prune: the source's active tools absent from the request. */
  retired: string[];
  errors: CatalogSyncError[];
}

/** GET /v1/catalog/index-status: how far indexing is for the tenant's (or a source's) active tools. */
export interface IndexProgress {
  /** The embedding model; null without an embedder (nothing to wait for). */
  model: string | null;
  active: number;
  indexed: number;
  pending: number;
  failed: number;
  /** Tools waiting for vectors in the whole service (indexed in order). */
  backlog: number;
  texts_per_second: number | null;
  tools_per_second: number | null;
  /** Seconds until the service-wide backlog is indexed at the recent rate; null while unknown. */
  eta_seconds: number | null;
}

export interface Readiness {
  status: string;
  checks?: Record<string, unknown>;
  [extra: string]: unknown;
}
