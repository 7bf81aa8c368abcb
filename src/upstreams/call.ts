import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Static } from 'typebox';

import { appendAudit } from '../audit/repository.js';
import type { Principal } from '../auth/principal.js';
import type { AuthorizeService, Decision } from '../authorize/service.js';
import type { Db } from '../db/client.js';
import { AppError, toolNotFound } from '../errors.js';
import { InFlight } from '../in-flight.js';
import { UpstreamCancel, UpstreamError } from './client.js';
import { findRoute } from './repository.js';
import type { CallBody } from './schemas.js';
import type { UpstreamService } from './service.js';

type CallInput = Static<typeof CallBody>;

/** The call was refused by the authorize decision: the route answers 403 with it, MCP an isError result. */
export class CallDenied extends Error {
  override readonly name = 'CallDenied';
  constructor(readonly decision: Decision) {
    super(decision.reasons.map((r) => r.message).join('; '));
  }
}

/** The caller went away before the upstream answered; the call was cancelled upstream and nothing is left to answer. */
export class CallCancelled extends Error {
  override readonly name = 'CallCancelled';
}

/** How a call that reached an upstream ended (audited as `call_result` and timed in the metrics). */
export type CallOutcome = 'ok' | 'tool_error' | 'failed' | 'cancelled';

/** Called once per call that reached an upstream (metrics). */
type CallListener = (outcome: CallOutcome, seconds: number) => void;

/**
 * A tool call through the registry: /v1/authorize's decision (the same service, so the same
 * tenant, scope, status, argument and policy checks, audited and counted for usage and learning,
 * with action 'call'), then, only when allowed, tools/call to the upstream that serves the tool,
 * with the upstream's own tool name. The outcome (upstream, latency, error) is audited as
 * 'call_result'. A tool the caller may not see is a 404, as GET /v1/tools/{name} answers.
 */
export class CallService {
  /** Calls running upstream, per tenant. */
  private readonly inFlight = new InFlight<string>();

  constructor(
    private readonly db: Db,
    private readonly authorize: AuthorizeService,
    private readonly upstreams: UpstreamService,
    private readonly onCall: CallListener = () => undefined,
    /**
     * Calls one tenant may have running upstream at once: each holds a socket and up to
     * UPSTREAM_MAX_RESPONSE_BYTES for as long as UPSTREAM_CALL_TIMEOUT_MS, so a tenant's slow,
     * large upstream must not fill the process's memory for every tenant.
     */
    private readonly maxInFlight: number = Number.POSITIVE_INFINITY,
  ) {}

  /**
   * `signal` aborts when the caller goes away (its connection closed, or an MCP cancellation):
   * the upstream is told to stop, and the call's place among the tenant's calls in flight is freed
   * once its stream to the upstream is closed (at once when no other call shares its session),
   * instead of when the upstream answers or times out.
   */
  async call(principal: Principal, input: CallInput, signal?: AbortSignal): Promise<CallToolResult> {
    const decision = await this.authorize.authorize(principal, input, 'call');
    if (decision.decision === 'deny') {
      if (decision.reasons.some((r) => r.code === 'unknown_tool')) throw toolNotFound(input.tool);
      throw new CallDenied(decision);
    }
    const route = await findRoute(this.db, principal.tenant, input.tool);
    if (!route) {
      throw new AppError('conflict', `tool '${input.tool}' is not served by a registered upstream: call it where it runs (POST /v1/authorize checks such calls)`, [
        { pointer: '/tool', message: 'not served by an upstream' },
      ]);
    }
    const started = performance.now();
    const upstream = route.upstream.name;
    const running = this.inFlight.count(principal.tenant);
    if (running >= this.maxInFlight) {
      await this.audit(principal, input, decision, { upstream, latency_ms: 0, outcome: 'failed', error: 'too many calls in flight' });
      throw new AppError('rate_limited', `this tenant already has ${running} calls running upstream (UPSTREAM_MAX_CALLS_IN_FLIGHT); retry when one has ended`);
    }
    this.inFlight.enter(principal.tenant);
    // A cancelled call keeps its place until its stream to the upstream is closed: the place bounds open streams.
    let released: Promise<void> | undefined;
    try {
      const result = await this.upstreams.clients.call(this.upstreams.target(route.upstream), route.remoteName, decision.arguments ?? input.arguments, signal);
      const seconds = (performance.now() - started) / 1000;
      const outcome = result.isError === true ? 'tool_error' : 'ok';
      this.onCall(outcome, seconds);
      await this.audit(principal, input, decision, { upstream, latency_ms: Math.round(seconds * 1000), outcome });
      return result;
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      if (error instanceof UpstreamCancel) released = error.streamClosed;
      const seconds = (performance.now() - started) / 1000;
      const outcome = error.kind === 'cancelled' ? 'cancelled' : 'failed';
      this.onCall(outcome, seconds);
      await this.audit(principal, input, decision, { upstream, latency_ms: Math.round(seconds * 1000), outcome, error: error.message });
      if (outcome === 'cancelled') throw new CallCancelled(error.message);
      const code = error.kind === 'unreachable' ? 'unavailable' : 'bad_gateway';
      throw new AppError(code, `upstream '${upstream}' failed: ${error.message}`);
    } finally {
      if (released) void released.then(() => this.inFlight.leave(principal.tenant));
      else this.inFlight.leave(principal.tenant);
    }
  }

  private async audit(principal: Principal, input: CallInput, decision: Decision, details: Record<string, unknown>): Promise<void> {
    await appendAudit(this.db, {
      tenantId: principal.tenant,
      actor: principal.subject,
      action: 'call_result',
      toolName: input.tool,
      toolVersion: decision.tool.version,
      decision: decision.decision,
      discoveryId: input.discovery_id ?? null,
      details,
    });
  }
}
