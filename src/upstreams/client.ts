import { setMaxListeners } from 'node:events';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type CallToolResult, CallToolResultSchema, ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { LRUCache } from 'lru-cache';

import { MAX_SYNC_TOOLS } from '../catalog/schemas.js';
import { InFlight } from '../in-flight.js';
import { listAllTools, MAX_TOOL_PAGES } from '../mcp-client/list-tools.js';
import { propagatingFetch } from '../telemetry/outgoing.js';
import { VERSION } from '../version.js';
import { redact } from './secrets.js';

/** One upstream as the client reaches it; `key` changes whenever its URL or headers do. */
export interface UpstreamTarget {
  key: string;
  tenant: string;
  name: string;
  url: string;
  headers: Record<string, string>;
}

interface UpstreamClientOptions {
  connectTimeoutMs: number;
  callTimeoutMs: number;
  maxResponseBytes: number;
  /** Open sessions kept, across every tenant's upstreams (default MAX_SESSIONS). */
  maxSessions?: number;
}

/**
 * Why an upstream could not answer: `unreachable` (503) or anything else it did wrong (502), or
 * `cancelled`: the registry's own caller went away first, and the call was cancelled upstream.
 */
export class UpstreamError extends Error {
  override readonly name = 'UpstreamError';
  constructor(
    readonly kind: 'unreachable' | 'timeout' | 'redirect' | 'too_large' | 'protocol' | 'cancelled',
    message: string,
  ) {
    super(message);
  }
}

/** The upstream answered with a JSON-RPC error: the session is fine, the call was refused. */
class UpstreamRefusal extends UpstreamError {}

/**
 * The registry's caller went away and the call was cancelled upstream. `streamClosed` settles when
 * the call's stream to the upstream is closed: with its session, once the session's other calls
 * have ended (a stateless upstream only learns of the cancellation then).
 */
export class UpstreamCancel extends UpstreamError {
  constructor(readonly streamClosed: Promise<void> = Promise.resolve()) {
    super('cancelled', 'the caller went away before the upstream answered');
  }
}

const MAX_SESSIONS = 256;
const CLOSE_WAIT_MS = 2_000;
/**
 * A whole tools/list, every page, must end within this (or one connect timeout, if longer): the
 * periodic sync visits every tenant's upstreams one after another, so an upstream paging slowly
 * must not hold the others' syncs for hours.
 */
const LISTING_DEADLINE_MS = 60_000;

const tooLarge = (maxBytes: number) => new UpstreamError('too_large', `the upstream's response is larger than ${maxBytes} bytes`);

/**
 * `body` with each server-sent event (the bytes up to a blank line) held to `maxBytes`. The SDK
 * buffers an event whole before parsing it, so one endless event on the long-lived stream of
 * notifications would grow the heap until the process died, for every tenant.
 */
function cappedEvents(body: ReadableStream<Uint8Array>, maxBytes: number): ReadableStream<Uint8Array> {
  let eventBytes = 0;
  // SSE lines end in CRLF, LF or CR alone; a line end right after another is a blank line.
  let atLineStart = false;
  let afterCr = false;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        for (const byte of chunk) {
          const lf = byte === 0x0a;
          if (lf && afterCr) {
            afterCr = false; // the LF of a CRLF: one line end, already counted
            continue;
          }
          const lineEnd = lf || byte === 0x0d;
          if (lineEnd && atLineStart) eventBytes = 0;
          atLineStart = lineEnd;
          afterCr = byte === 0x0d;
          eventBytes += 1;
          if (eventBytes > maxBytes) return controller.error(tooLarge(maxBytes));
        }
        controller.enqueue(chunk);
      },
    }),
  );
}

/**
 * fetch for upstreams: redirects are refused (an allow-listed URL must not send the registry, and
 * the upstream's credentials, elsewhere), and a response body past the cap fails the request.
 * On the long-lived GET stream of notifications, the cap holds for each event.
 */
export function guardedFetch(maxBytes: number): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, { ...init, redirect: 'manual' });
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel();
      throw new UpstreamError('redirect', `the upstream answered ${response.status} (a redirect); redirects are not followed`);
    }
    if (!response.body) return response;
    const wrap = (body: ReadableStream<Uint8Array>) => new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
    if (init?.method !== 'POST') return wrap(cappedEvents(response.body, maxBytes));
    if (Number(response.headers.get('content-length') ?? 0) > maxBytes) {
      await response.body.cancel();
      throw tooLarge(maxBytes);
    }
    let seen = 0;
    const capped = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen > maxBytes) controller.error(tooLarge(maxBytes));
          else controller.enqueue(chunk);
        },
      }),
    );
    return wrap(capped);
  };
}

/**
 * Runs `work` with a signal aborted (as a TimeoutError) after `ms`, and never after `work` ended:
 * the SDK leaves a listener on the signal of every request it sent, which AbortSignal.timeout
 * would fire later, cancelling requests long answered. The deadline also ends the wait for work
 * that does not heed its signal everywhere (the SDK's connect sends `notifications/initialized`
 * without it).
 */
async function withDeadline<T>(ms: number, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const deadline = new AbortController();
  // One listener per page of a listing.
  setMaxListeners(MAX_TOOL_PAGES + 1, deadline.signal);
  const expired = new Promise<never>((_, reject) => deadline.signal.addEventListener('abort', () => reject(deadline.signal.reason as Error), { once: true }));
  const timer = setTimeout(() => deadline.abort(new DOMException('the upstream did not answer in time', 'TimeoutError')), ms);
  try {
    return await Promise.race([work(deadline.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}

const closeSession = (session: Promise<Client>): Promise<void> => session.then((client) => client.close()).catch(() => undefined);

/** An error from the SDK or the network as an UpstreamError whose message holds no header value. */
function upstreamFailure(error: unknown, target: UpstreamTarget): UpstreamError {
  const clean = (message: string) => redact(message, target.headers).slice(0, 300);
  if (error instanceof UpstreamError) return new UpstreamError(error.kind, clean(error.message));
  if (error instanceof McpError && error.code === Number(ErrorCode.RequestTimeout)) return new UpstreamError('timeout', 'the upstream did not answer in time');
  if (error instanceof DOMException && error.name === 'TimeoutError') return new UpstreamError('timeout', 'the upstream did not answer in time');
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  // fetch's TypeError ('fetch failed', cause ECONNREFUSED...) means nothing answered.
  if (error instanceof TypeError) return new UpstreamError('unreachable', clean(`the upstream is unreachable (${message}${cause})`));
  return new UpstreamError('protocol', clean(message));
}

/**
 * MCP client sessions to upstreams, one per upstream and replica, reused by every call (a call is
 * one round trip, not initialize + call + close) and bounded. A session the upstream forgot
 * (404) is reopened once; any other failure closes it, so the next call starts afresh.
 * `onToolsChanged` hears an open session's `notifications/tools/list_changed`.
 */
export class UpstreamClients {
  private readonly sessions: LRUCache<string, Promise<Client>>;
  /** Calls running on each session. */
  private readonly inUse = new InFlight<Promise<Client>>();
  /** Sessions left (evicted, dropped, failed) that still carry calls: closed once the last one ends (`closed` settles then). */
  private readonly closeWhenIdle = new Map<Promise<Client>, { closed: Promise<void>; close: () => void }>();

  constructor(
    private readonly options: UpstreamClientOptions,
    private readonly onToolsChanged: (target: UpstreamTarget) => void = () => undefined,
  ) {
    // Sessions are shared by every tenant's upstreams: a session evicted to make room for another
    // tenant's is closed only once its calls have ended, so that tenant's calls in flight are not
    // cut off (closing at once failed them with "connection closed", a 502).
    this.sessions = new LRUCache<string, Promise<Client>>({
      max: options.maxSessions ?? MAX_SESSIONS,
      dispose: (session) => this.retire(session),
    });
  }

  private retire(session: Promise<Client>): void {
    if (this.inUse.count(session) > 0) this.leaveWhenIdle(session);
    else void closeSession(session);
  }

  /** Marks `session` to be closed after its last call; resolves once it is closed. */
  private leaveWhenIdle(session: Promise<Client>): Promise<void> {
    let entry = this.closeWhenIdle.get(session);
    if (!entry) {
      let close!: () => void;
      const closed = new Promise<void>((resolve) => (close = () => void closeSession(session).then(resolve)));
      entry = { closed, close };
      this.closeWhenIdle.set(session, entry);
    }
    return entry.closed;
  }

  private open(target: UpstreamTarget): Promise<Client> {
    const existing = this.sessions.get(target.key);
    if (existing) return existing;
    const session = this.connect(target);
    this.sessions.set(target.key, session);
    session.catch(() => this.forget(target.key, session));
    return session;
  }

  private async connect(target: UpstreamTarget): Promise<Client> {
    const client = new Client(
      { name: 'tool-registry-gateway', version: VERSION },
      { capabilities: {}, listChanged: { tools: { autoRefresh: false, onChanged: () => this.onToolsChanged(target) } } },
    );
    const transport = new StreamableHTTPClientTransport(new URL(target.url), {
      requestInit: { headers: target.headers },
      fetch: propagatingFetch(guardedFetch(this.options.maxResponseBytes)),
      reconnectionOptions: { maxReconnectionDelay: 30_000, initialReconnectionDelay: 1_000, reconnectionDelayGrowFactor: 2, maxRetries: 2 },
    });
    try {
      // The SDK's timeout bounds `initialize`, not the `notifications/initialized` POST after it: an
      // upstream that never answered that would leave the session, and every call waiting on it, pending.
      await withDeadline(this.options.connectTimeoutMs, (signal) => client.connect(transport, { timeout: this.options.connectTimeoutMs, signal }));
    } catch (error) {
      await client.close().catch(() => undefined);
      throw error;
    }
    return client;
  }

  private forget(key: string, session: Promise<Client>): void {
    if (this.sessions.peek(key) === session) this.sessions.delete(key);
  }

  /** Runs `work` on the upstream's session; a session the upstream no longer knows is reopened once. */
  private async withSession<T>(target: UpstreamTarget, work: (client: Client) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt += 1) {
      const session = this.open(target);
      this.inUse.enter(session);
      try {
        return await work(await session);
      } catch (error) {
        if (error instanceof UpstreamRefusal) throw error;
        this.forget(target.key, session);
        const closed = this.leaveWhenIdle(session);
        if (error instanceof UpstreamCancel) throw new UpstreamCancel(closed);
        // 404: the session expired upstream (restart, idle timeout); the request never ran.
        if (attempt === 0 && error instanceof StreamableHTTPError && error.code === 404) continue;
        throw upstreamFailure(error, target);
      } finally {
        this.done(session);
      }
    }
  }

  /** One call on `session` ended: a session already left is closed after its last call. */
  private done(session: Promise<Client>): void {
    if (this.inUse.leave(session) > 0) return;
    this.closeWhenIdle.get(session)?.close();
    this.closeWhenIdle.delete(session);
  }

  /** Every tool of the upstream, with the server's name. */
  async list(target: UpstreamTarget): Promise<{ tools: Tool[]; server: string | undefined }> {
    return this.withSession(target, async (client) => ({
      tools: await withDeadline(Math.max(LISTING_DEADLINE_MS, this.options.connectTimeoutMs), (signal) =>
        // As many tools as one catalog sync may carry.
        listAllTools(client, { timeout: this.options.connectTimeoutMs, signal }, MAX_SYNC_TOOLS),
      ),
      server: client.getServerVersion()?.name,
    }));
  }

  /**
   * One tools/call with the upstream's own tool name. A tool's own error (isError) is a result.
   * When `signal` aborts (the registry's caller went away), the SDK sends the upstream
   * notifications/cancelled and the call fails as an UpstreamCancel; its session is then closed like
   * a failed one, which also ends the request's own stream (an upstream that honours the
   * cancellation never answers it, and a stateless one only learns of it when that stream closes).
   */
  async call(target: UpstreamTarget, tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<CallToolResult> {
    // Gone before anything was sent: the session is not at fault.
    if (signal?.aborted) throw new UpstreamCancel();
    return this.withSession(target, async (client) => {
      try {
        return (await client.callTool({ name: tool, arguments: args }, CallToolResultSchema, { timeout: this.options.callTimeoutMs, signal })) as CallToolResult;
      } catch (error) {
        if (signal?.aborted) throw new UpstreamCancel();
        // A JSON-RPC error from the upstream (e.g. invalid params) leaves the session usable.
        if (error instanceof McpError && error.code !== Number(ErrorCode.RequestTimeout) && error.code !== Number(ErrorCode.ConnectionClosed)) {
          throw new UpstreamRefusal('protocol', redact(`the upstream refused the call: ${error.message}`, target.headers).slice(0, 300));
        }
        throw error;
      }
    });
  }

  /** Closes the sessions of an upstream that changed or left (every key starting with `prefix`). */
  drop(prefix: string): void {
    for (const key of [...this.sessions.keys()]) if (key.startsWith(prefix)) this.sessions.delete(key);
  }

  /** Closes every session (app shutdown), waiting a bounded time for each: a stuck upstream must not hold the shutdown. */
  async close(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    const bounded = (work: Promise<unknown>) => Promise.race([work, new Promise((resolve) => setTimeout(resolve, CLOSE_WAIT_MS).unref())]);
    await Promise.all(all.map((session) => bounded(session.then((client) => client.close())).catch(() => undefined)));
  }
}
