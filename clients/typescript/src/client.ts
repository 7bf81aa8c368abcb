import { RegistryError } from './errors.js';
import { Transport, type TransportOptions } from './http.js';
import type {
  AuditPage,
  AuditParams,
  AuditRecord,
  AuthorizeRequest,
  AuthorizeResponse,
  CatalogSyncRequest,
  CatalogSyncResult,
  DiscoveriesPage,
  DiscoverRequest,
  DiscoverResponse,
  DiscoveryRecord,
  DryRunResult,
  IndexProgress,
  IndexStatus,
  ListDiscoveriesParams,
  ListToolsParams,
  Readiness,
  SchemaFormat,
  ToolCard,
  ToolDocument,
  ToolPage,
  ToolResult,
  ToolVersion,
  ToolView,
} from './types.js';

/** How the client reaches the service: the transport's options. */
export type RegistryClientOptions = TransportOptions;

export interface CallOptions {
  signal?: AbortSignal;
}

const toolPath = (name: string) => `/v1/tools/${encodeURIComponent(name)}`;

export interface WaitOptions extends CallOptions {
  /** Give up after this long (default 60 000 ms). */
  timeoutMs?: number;
  /** Time between polls (default 500 ms). */
  intervalMs?: number;
}

/**
 * Every item of a paged listing, page by page: `page` fetches the page at a position (undefined:
 * the first) and names the next position (null: that was the last page). A page may be empty
 * before the end (a filtered audit or poor-discovery page examines a bounded window).
 */
async function* paginate<T, P>(page: (from: P | undefined) => Promise<{ items: T[]; next: P | null }>): AsyncGenerator<T> {
  let from: P | undefined;
  do {
    const { items, next } = await page(from);
    yield* items;
    from = next ?? undefined;
  } while (from !== undefined);
}

/**
 * Typed client of the tool registry HTTP API. Every failure is a {@link RegistryError}; 408, 429,
 * 5xx and network errors are retried with exponential backoff, honouring Retry-After. Without
 * options it reads REGISTRY_URL and REGISTRY_TOKEN from the environment.
 */
export class RegistryClient {
  private readonly transport: Transport;

  constructor(options: RegistryClientOptions = {}) {
    this.transport = new Transport(options);
  }

  /** The base URL requests go to. */
  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  /** POST /v1/tools: registers a new tool (409 `conflict` when the name exists). */
  async createTool(document: ToolDocument, options: CallOptions = {}): Promise<ToolResult> {
    const response = await this.transport.request<ToolView>({ method: 'POST', path: '/v1/tools', body: document, signal: options.signal });
    return { tool: response.body, etag: response.headers.get('etag') ?? '' };
  }

  /**
   * PUT /v1/tools/{name}: publishes a new version (identical content is a no-op: same revision).
   * `ifMatch` makes it conditional on the ETag you read (412 `precondition_failed` otherwise).
   */
  async updateTool(name: string, document: ToolDocument, options: CallOptions & { ifMatch?: string } = {}): Promise<ToolResult> {
    const response = await this.transport.request<ToolView>({
      method: 'PUT',
      path: toolPath(name),
      body: document,
      headers: { 'if-match': options.ifMatch },
      signal: options.signal,
    });
    return { tool: response.body, etag: response.headers.get('etag') ?? '' };
  }

  /** POST /v1/tools?dry_run=true: every check of {@link createTool} (its 4xx as a RegistryError), nothing stored. */
  async dryRunCreate(document: ToolDocument, options: CallOptions = {}): Promise<DryRunResult> {
    const response = await this.transport.request<DryRunResult>({ method: 'POST', path: '/v1/tools', query: { dry_run: true }, body: document, signal: options.signal });
    return response.body;
  }

  /** PUT /v1/tools/{name}?dry_run=true: every check of {@link updateTool} (version rules, If-Match), nothing stored. */
  async dryRunUpdate(name: string, document: ToolDocument, options: CallOptions & { ifMatch?: string } = {}): Promise<DryRunResult> {
    const response = await this.transport.request<DryRunResult>({
      method: 'PUT',
      path: toolPath(name),
      query: { dry_run: true },
      body: document,
      headers: { 'if-match': options.ifMatch },
      signal: options.signal,
    });
    return response.body;
  }

  /**
   * Polls a tool's `index_status` (publishers) until it is `indexed` or `failed`, or the timeout
   * passes; resolves with the last status seen.
   */
  async waitForIndex(name: string, options: WaitOptions = {}): Promise<IndexStatus> {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const status = (await this.getTool(name, options)).tool.index_status ?? 'indexed';
      if (status !== 'pending' || Date.now() >= deadline) return status;
      await new Promise((resolve) => setTimeout(resolve, Math.min(options.intervalMs ?? 500, Math.max(0, deadline - Date.now()))));
    }
  }

  /**
   * POST /v1/catalog/sync: declares every tool `source` publishes; new ones are created, changed
   * ones versioned, unchanged ones left alone, and with `prune` the source's absent ones retired.
   * Refused tools come back in `errors`, the rest still sync. Idempotent, so it is safe to retry;
   * `timeoutMs` (default 10 minutes) covers a first sync of thousands of tools.
   */
  async syncCatalog(request: CatalogSyncRequest, options: CallOptions & { timeoutMs?: number } = {}): Promise<CatalogSyncResult> {
    const response = await this.transport.request<CatalogSyncResult>({
      method: 'POST',
      path: '/v1/catalog/sync',
      body: request,
      timeoutMs: options.timeoutMs ?? 600_000,
      signal: options.signal,
    });
    return response.body;
  }

  /** GET /v1/catalog/index-status: index counts of the tenant's active tools (or one source's), backlog and ETA. */
  async indexProgress(source?: string, options: CallOptions = {}): Promise<IndexProgress> {
    return (await this.transport.request<IndexProgress>({ method: 'GET', path: '/v1/catalog/index-status', query: { source }, signal: options.signal })).body;
  }

  /**
   * Polls {@link indexProgress} until no tool of `source` is pending (indexed or failed), or the
   * timeout passes; `onProgress` sees every poll. Resolves with the last progress read.
   */
  async waitForCatalogIndex(source: string | undefined, options: WaitOptions & { onProgress?: (progress: IndexProgress) => void } = {}): Promise<IndexProgress> {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      const progress = await this.indexProgress(source, options);
      options.onProgress?.(progress);
      if (progress.pending === 0 || Date.now() >= deadline) return progress;
      await new Promise((resolve) => setTimeout(resolve, Math.min(options.intervalMs ?? 1_000, Math.max(0, deadline - Date.now()))));
    }
  }

  /** GET /v1/tools/{name}: the tool with its full schema (404 `not_found` when unknown or not visible). */
  async getTool(name: string, options: CallOptions = {}): Promise<ToolResult> {
    const response = await this.transport.request<ToolView>({ method: 'GET', path: toolPath(name), signal: options.signal });
    return { tool: response.body, etag: response.headers.get('etag') ?? '' };
  }

  /** Like {@link getTool}, but resolves undefined instead of throwing on 404. */
  async findTool(name: string, options: CallOptions = {}): Promise<ToolResult | undefined> {
    try {
      return await this.getTool(name, options);
    } catch (error) {
      if (error instanceof RegistryError && error.status === 404) return undefined;
      throw error;
    }
  }

  /** GET /v1/tools: one page of cards the caller may see, by name. */
  async listTools(params: ListToolsParams = {}, options: CallOptions = {}): Promise<ToolPage> {
    const response = await this.transport.request<ToolPage>({
      method: 'GET',
      path: '/v1/tools',
      query: {
        limit: params.limit,
        cursor: params.cursor,
        include_retired: params.includeRetired,
        category: params.category,
        tags: params.tags?.join(','),
      },
      signal: options.signal,
    });
    return response.body;
  }

  /** Every card the caller may see, following `next_cursor` page by page. */
  iterateTools(params: Omit<ListToolsParams, 'cursor'> = {}, options: CallOptions = {}): AsyncGenerator<ToolCard> {
    return paginate(async (cursor: string | undefined) => {
      const page = await this.listTools({ ...params, cursor }, options);
      return { items: page.tools, next: page.next_cursor };
    });
  }

  /** GET /v1/tools/{name}/versions: version history (publishers). */
  async listVersions(name: string, options: CallOptions = {}): Promise<ToolVersion[]> {
    const response = await this.transport.request<{ versions: ToolVersion[] }>({ method: 'GET', path: `${toolPath(name)}/versions`, signal: options.signal });
    return response.body.versions;
  }

  /** DELETE /v1/tools/{name}: retires the tool (history kept; a later PUT restores it). */
  async retireTool(name: string, options: CallOptions & { ifMatch?: string } = {}): Promise<ToolResult> {
    const response = await this.transport.request<ToolView>({
      method: 'DELETE',
      path: toolPath(name),
      headers: { 'if-match': options.ifMatch },
      signal: options.signal,
    });
    return { tool: response.body, etag: response.headers.get('etag') ?? '' };
  }

  /**
   * POST /v1/discover: the few tools that fit `query`, with full schemas for those only, typed by
   * the requested `format` (`openai` when absent): `(await discover({ query, format: 'anthropic' })).tools[0].schema.input_schema`.
   */
  async discover<F extends SchemaFormat = 'openai'>(request: DiscoverRequest<F> | string, options: CallOptions = {}): Promise<DiscoverResponse<F>> {
    const body = typeof request === 'string' ? { query: request } : request;
    const response = await this.transport.request<DiscoverResponse<F>>({ method: 'POST', path: '/v1/discover', body, signal: options.signal });
    return response.body;
  }

  /** GET /v1/discoveries: one page of the tenant's recent discoveries (publishers), newest first. */
  async listDiscoveries(params: ListDiscoveriesParams = {}, options: CallOptions = {}): Promise<DiscoveryRecord[]> {
    return (await this.discoveriesPage(params, options)).discoveries;
  }

  /**
   * Every discovery matching `params`, newest first, following `next_before` page by page (a
   * `poor` page may be short, or empty, before the end).
   */
  iterateDiscoveries(params: Omit<ListDiscoveriesParams, 'before'> = {}, options: CallOptions = {}): AsyncGenerator<DiscoveryRecord> {
    return paginate(async (before: string | undefined) => {
      const page = await this.discoveriesPage({ ...params, before }, options);
      return { items: page.discoveries, next: page.next_before };
    });
  }

  private async discoveriesPage(params: ListDiscoveriesParams, options: CallOptions): Promise<DiscoveriesPage> {
    const response = await this.transport.request<DiscoveriesPage>({
      method: 'GET',
      path: '/v1/discoveries',
      query: { limit: params.limit, before: params.before, poor: params.poor },
      signal: options.signal,
    });
    return response.body;
  }

  /** POST /v1/authorize: may this token run this tool with these arguments? A deny is a result, not an error. */
  async authorize(request: AuthorizeRequest, options: CallOptions = {}): Promise<AuthorizeResponse> {
    const response = await this.transport.request<AuthorizeResponse>({ method: 'POST', path: '/v1/authorize', body: request, signal: options.signal });
    return response.body;
  }

  /** GET /v1/audit: the tenant's audit records (publishers), newest first, paginated. */
  async audit(params: AuditParams = {}, options: CallOptions = {}): Promise<AuditPage> {
    const response = await this.transport.request<AuditPage>({
      method: 'GET',
      path: '/v1/audit',
      query: { limit: params.limit, before: params.before, action: params.action, tool: params.tool },
      signal: options.signal,
    });
    return response.body;
  }

  /** Every audit record matching `params`, following `next_before` page by page. */
  iterateAudit(params: Omit<AuditParams, 'before'> = {}, options: CallOptions = {}): AsyncGenerator<AuditRecord> {
    return paginate(async (before: number | undefined) => {
      const page = await this.audit({ ...params, before }, options);
      return { items: page.entries, next: page.next_before };
    });
  }

  /** GET /healthz: liveness. */
  async health(options: CallOptions = {}): Promise<{ status: string }> {
    return (await this.transport.request<{ status: string }>({ method: 'GET', path: '/healthz', signal: options.signal })).body;
  }

  /** GET /readyz: readiness per check; resolves (with `ready: false`) on 503 instead of retrying. */
  async ready(options: CallOptions = {}): Promise<Readiness & { ready: boolean }> {
    const response = await this.transport.request<Readiness>({ method: 'GET', path: '/readyz', accept: [503], retry: false, signal: options.signal });
    return { ...response.body, ready: response.status === 200 };
  }
}
