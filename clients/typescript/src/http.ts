import { RegistryError } from './errors.js';
import type { ErrorBody, ServerErrorCode } from './types.js';
import { VERSION } from './version.js';

/** A fetch implementation (the global one by default; inject one for tests or proxies). */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Bearer token, or a function returning a fresh one per request (token refresh). */
export type TokenSource = string | (() => string | Promise<string>);

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 disables). */
  retries?: number;
  /** First backoff delay in ms (default 200), doubled each attempt. */
  baseDelayMs?: number;
  /** Cap on any single delay, Retry-After included (default 10 000). */
  maxDelayMs?: number;
  /** Statuses to retry (default 408, 429 and 5xx: 500, 502, 503, 504), each honouring Retry-After. */
  statuses?: number[];
  /** Retry network errors and timeouts (default true). */
  networkErrors?: boolean;
  /** Randomize each delay in [delay/2, delay] to spread herds (default true). */
  jitter?: boolean;
}

export interface TransportOptions {
  /** Base URL of the service, e.g. http://localhost:8080 (default: env REGISTRY_URL, else http://localhost:8080). */
  baseUrl?: string;
  /** Bearer JWT, or a function returning a fresh one for each request (default: env REGISTRY_TOKEN). */
  token?: TokenSource;
  /** Added before this package's own user agent, e.g. "my-gateway/2.1". */
  userAgent?: string;
  /** fetch implementation (default: the global fetch). */
  fetch?: FetchLike;
  /** Per-attempt timeout in ms (default 30 000; 0 disables). */
  timeoutMs?: number;
  /** Backoff policy for 408, 429, 5xx and network errors (default: 3 retries from 200 ms, Retry-After honoured). */
  retry?: RetryOptions;
  /** Extra headers on every request (e.g. x-request-id for tracing). */
  headers?: Record<string, string>;
  /** Sleep between retries (tests inject a fake clock). */
  sleep?: (ms: number) => Promise<void>;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  headers?: Record<string, string | undefined>;
  /** Statuses returned as results instead of thrown (e.g. 503 from /readyz). */
  accept?: number[];
  retry?: boolean;
  signal?: AbortSignal;
  /** This request's per-attempt timeout, ms, instead of the client's (a catalog sync takes longer). */
  timeoutMs?: number;
}

export interface RawResponse<T> {
  status: number;
  headers: Headers;
  body: T;
}

const SERVER_CODES: ReadonlySet<string> = new Set<ServerErrorCode>([
  'bad_request', 'validation_failed', 'unauthorized', 'forbidden', 'not_found', 'conflict', 'precondition_failed',
  'payload_too_large', 'unsupported_media_type', 'rate_limited', 'bad_gateway', 'unavailable', 'internal',
]);

const CODE_BY_STATUS: Record<number, ServerErrorCode> = {
  400: 'bad_request', 401: 'unauthorized', 403: 'forbidden', 404: 'not_found', 409: 'conflict', 412: 'precondition_failed',
  413: 'payload_too_large', 415: 'unsupported_media_type', 429: 'rate_limited', 502: 'bad_gateway', 503: 'unavailable',
};

/** Default statuses retried: request timeout, rate limited, and server-side failures. */
export const RETRY_STATUSES: readonly number[] = [408, 429, 500, 502, 503, 504];

/** The default service address when neither an option nor REGISTRY_URL gives one. */
export const DEFAULT_BASE_URL = 'http://localhost:8080';

/** An environment variable, where there is an environment (Node, Deno, Bun; not browsers). */
function environment(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const value = env?.[name];
  return value === undefined || value === '' ? undefined : value;
}

function runtime(): string {
  const versions = (globalThis as { process?: { versions?: { node?: string } } }).process?.versions;
  return versions?.node ? `node/${versions.node}` : 'js';
}

/** Parses Retry-After (delta seconds or an HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function isErrorBody(value: unknown): value is ErrorBody {
  const error = (value as { error?: unknown } | null)?.error as Record<string, unknown> | undefined;
  return typeof error === 'object' && error !== null && typeof error.code === 'string' && typeof error.message === 'string';
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The HTTP core of the SDK: auth header, JSON, timeouts, typed errors, retries with backoff. */
export class Transport {
  readonly baseUrl: string;
  private readonly token: TokenSource | undefined;
  private readonly userAgent: string;
  private readonly fetch: FetchLike;
  private readonly retry: Required<RetryOptions>;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: TransportOptions = {}) {
    this.baseUrl = (options.baseUrl ?? environment('REGISTRY_URL') ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.token = options.token ?? environment('REGISTRY_TOKEN');
    this.userAgent = `${options.userAgent ? `${options.userAgent} ` : ''}tool-registry-client/${VERSION} ${runtime()}`;
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.retry = { retries: 3, baseDelayMs: 200, maxDelayMs: 10_000, statuses: [...RETRY_STATUSES], networkErrors: true, jitter: true, ...options.retry };
    this.sleep = options.sleep ?? defaultSleep;
  }

  /** Sends `spec`, retrying transient failures; resolves with the parsed JSON body. */
  async request<T>(spec: RequestSpec): Promise<RawResponse<T>> {
    const maxAttempts = spec.retry === false ? 1 : this.retry.retries + 1;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.once<T>(spec);
      } catch (error) {
        if (!(error instanceof RegistryError) || attempt >= maxAttempts || !this.retryable(error) || spec.signal?.aborted) throw error;
        await this.sleep(this.delay(attempt, error.retryAfterMs));
      }
    }
  }

  private retryable(error: RegistryError): boolean {
    if (error.status === 0) return this.retry.networkErrors && error.code !== 'invalid_response';
    return this.retry.statuses.includes(error.status);
  }

  /** Exponential backoff (optionally jittered), or the server's Retry-After when it asks for longer. */
  private delay(attempt: number, retryAfterMs: number | undefined): number {
    let backoff = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempt - 1));
    if (this.retry.jitter) backoff = backoff / 2 + Math.random() * (backoff / 2);
    return Math.min(this.retry.maxDelayMs, Math.max(backoff, retryAfterMs ?? 0));
  }

  private url(spec: RequestSpec): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(spec.query ?? {})) if (value !== undefined) params.set(key, String(value));
    const search = params.toString();
    return `${this.baseUrl}${spec.path}${search ? `?${search}` : ''}`;
  }

  private async headers(spec: RequestSpec): Promise<Record<string, string>> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': this.userAgent, ...this.options.headers };
    const token = typeof this.token === 'function' ? await this.token() : this.token;
    if (token) headers.authorization = `Bearer ${token}`;
    if (spec.body !== undefined) headers['content-type'] = 'application/json';
    for (const [key, value] of Object.entries(spec.headers ?? {})) if (value !== undefined) headers[key] = value;
    return headers;
  }

  private async once<T>(spec: RequestSpec): Promise<RawResponse<T>> {
    const timeoutMs = spec.timeoutMs ?? this.options.timeoutMs ?? 30_000;
    const signals = [spec.signal, timeoutMs > 0 ? AbortSignal.timeout(timeoutMs) : undefined].filter((s): s is AbortSignal => s !== undefined);
    let response: Response;
    try {
      response = await this.fetch(this.url(spec), {
        method: spec.method,
        headers: await this.headers(spec),
        ...(spec.body === undefined ? {} : { body: JSON.stringify(spec.body) }),
        ...(signals.length > 0 ? { signal: AbortSignal.any(signals) } : {}),
      });
    } catch (error) {
      if (spec.signal?.aborted) throw error;
      const timedOut = (error as { name?: string }).name === 'TimeoutError';
      const message = timedOut ? `no response from ${this.baseUrl} within ${timeoutMs} ms` : `cannot reach ${this.baseUrl}: ${causeMessage(error)}`;
      throw new RegistryError(0, timedOut ? 'timeout' : 'network_error', message, [], undefined, { cause: error });
    }
    const requestId = response.headers.get('x-request-id') ?? undefined;
    const text = await response.text();
    let body: unknown = undefined;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch (error) {
        if (response.ok) throw new RegistryError(response.status, 'invalid_response', `response is not JSON: ${text.slice(0, 200)}`, [], requestId, { cause: error });
      }
    }
    if (response.ok || response.status === 304 || spec.accept?.includes(response.status)) {
      return { status: response.status, headers: response.headers, body: body as T };
    }
    const retryAfterMs = parseRetryAfter(response.headers.get('retry-after'));
    if (isErrorBody(body)) {
      const { code, message, details, request_id } = body.error;
      const known = SERVER_CODES.has(code) ? (code as ServerErrorCode) : (CODE_BY_STATUS[response.status] ?? 'internal');
      throw new RegistryError(response.status, known, message, Array.isArray(details) ? details : [], request_id ?? requestId, { retryAfterMs });
    }
    const code = CODE_BY_STATUS[response.status] ?? (response.status >= 500 ? 'internal' : 'bad_request');
    throw new RegistryError(response.status, code, `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`, [], requestId, { retryAfterMs });
  }
}

function causeMessage(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}
