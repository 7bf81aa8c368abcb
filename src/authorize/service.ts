import { LRUCache } from 'lru-cache';
import type { Static } from 'typebox';

import type { Principal } from '../auth/principal.js';
import type { Db, Executor } from '../db/client.js';
import { invalidInput } from '../errors.js';
import { GroupedCalls } from '../grouped-calls.js';
import { holdsScopes, missingScopes } from '../tools/access.js';
import { type CompiledValidator, compileSchema } from '../tools/json-schema.js';
import { dropAbsentNulls } from '../tools/strict-nulls.js';
import { exceedsDepth } from '../tools/validation.js';
import { DecisionWriter } from './decision-writer.js';
import { authorizeInputProblems } from './input.js';
import { evaluatePolicy } from './policy.js';
import { findForDecisions, recordDecisions, type ToolForDecision, type ToolKey } from './repository.js';
import type { AuthorizeBody, AuthorizeResponse, Reason as ReasonSchema } from './schemas.js';

type AuthorizeInput = Static<typeof AuthorizeBody>;
export type Reason = Static<typeof ReasonSchema>;
export type Decision = Static<typeof AuthorizeResponse>;

/** Tool rows read per statement at most. */
const DEFAULT_READ_GROUP = 128;

/** Arguments nested deeper than this are denied unread: recursive schemas (`$ref: '#'`) would recurse as deep. */
const MAX_ARGUMENT_DEPTH = 64;

/** Fails closed for a stored schema that no longer compiles (e.g. a pattern now refused as unsafe). */
const uncheckable: CompiledValidator = () => [{ pointer: '/', message: "the tool's parameter schema cannot be checked; the publisher must republish the tool" }];

/** An allowed call that cited one of its caller's discoveries. */
export interface CitedCall {
  toolId: number;
  toolName: string;
  tenantId: string;
  subject: string;
  discoveryId: string;
}

/**
 * What reacts to allowed calls that cite a discovery (learning subscribes). It runs inside the
 * decision's transaction, so a decision and what it taught are recorded whole or not at all.
 */
export interface CitedCallListener {
  /** Off: no call is reported, and every decision is written as one statement. */
  readonly enabled: boolean;
  /** Reacts inside the decision's transaction; true when it changed a tool's indexed text. */
  cited(tx: Executor, call: CitedCall): Promise<boolean>;
}

const NO_LISTENER: CitedCallListener = { enabled: false, cited: async () => false };

/** Called once per decision (metrics). */
type DecisionListener = (decision: Decision, cachedValidator: boolean) => void;

/**
 * The gateway's check before a tool call. Everything comes from the verified token and the
 * tool's current row, read fresh on every call (so a retirement or a tightened scope applies to
 * the very next call on every replica); only compiled argument validators are cached, keyed by
 * tool id and revision, which a change always bumps. Reads are grouped like the decisions' writes:
 * the calls that arrive while one read is in flight are read together in the next statement, which
 * is still issued after each of them arrived, so none can see a row older than its own arrival.
 */
export class AuthorizeService {
  private readonly validators = new LRUCache<string, CompiledValidator>({ max: 2_000 });
  private readonly decisions: DecisionWriter;
  private readonly reads: GroupedCalls<ToolKey, ToolForDecision | undefined>;

  constructor(
    private readonly db: Db,
    /** Learning from calls; none: decisions only. */
    private readonly citedCalls: CitedCallListener = NO_LISTENER,
    private readonly onDecision: DecisionListener = () => undefined,
    /** Called after a cited call changed a tool's indexed text (to re-embed it). */
    private readonly onLearned: () => void = () => undefined,
    /** The discovery log is written in batches: waits until a cited discovery is readable. */
    private readonly discoveries: { settle(id: string): Promise<void> } = { settle: async () => undefined },
  ) {
    this.decisions = new DecisionWriter(db);
    this.reads = new GroupedCalls(
      async (keys) => (await findForDecisions(db, keys)).map((value) => ({ ok: true, value })),
      DEFAULT_READ_GROUP,
      (key) => key.tenantId,
    );
  }

  /** The decision (a 400 for input authorizeInputProblems refuses), audited under `action` ('call' when the registry itself runs the call: POST /v1/call, MCP call_tool). */
  async authorize(principal: Principal, input: AuthorizeInput, action: 'authorize' | 'call' = 'authorize'): Promise<Decision> {
    // Before the database, for every door alike (authorizeInputProblems says why).
    const problems = authorizeInputProblems(input);
    if (problems.length > 0) throw invalidInput(problems);
    const row = await this.reads.call({ tenantId: principal.tenant, name: input.tool });
    const visible = row !== undefined && holdsScopes(principal.scopes, row.requiredScopes);
    let cached = false;
    let decision: Decision;
    // Internal reasons go to the audit log only: the caller never learns whether an invisible tool exists.
    let auditReasons: unknown[];
    if (!row || !visible) {
      decision = deny(input.tool, null, [{ code: 'unknown_tool', message: `tool '${input.tool}' is not available to this caller` }]);
      auditReasons = row
        ? [{ code: 'missing_scopes', missing: missingScopes(principal.scopes, row.requiredScopes) }]
        : [{ code: 'unknown_tool' }];
    } else {
      const checked = this.check(row, principal, input);
      cached = checked.cached;
      decision = { decision: checked.reasons.length === 0 ? 'allow' : 'deny', reasons: checked.reasons, tool: { name: row.name, version: row.version } };
      // What was checked, when it differs from what was sent: the gateway runs these.
      if (checked.args !== input.arguments && decision.decision === 'allow') decision.arguments = checked.args;
      auditReasons = decision.reasons;
    }
    await this.record(principal, input, row, decision, auditReasons, action);
    this.onDecision(decision, cached);
    return decision;
  }

  private check(row: ToolForDecision, principal: Principal, input: AuthorizeInput): { reasons: Reason[]; cached: boolean; args: Record<string, unknown> } {
    const reasons: Reason[] = [];
    if (row.status === 'retired') reasons.push({ code: 'retired', message: `tool '${row.name}' is retired` });
    if (input.version !== undefined && input.version !== row.version) {
      reasons.push({ code: 'version_mismatch', message: `version ${input.version} is not the current version ${row.version}`, pointer: '/version' });
    }
    const key = `${row.id}:${row.revision}`;
    let validate = this.validators.get(key);
    const cached = validate !== undefined;
    if (!validate) {
      try {
        validate = compileSchema(row.parameters);
      } catch {
        validate = uncheckable;
      }
      this.validators.set(key, validate);
    }
    const tooDeep = exceedsDepth(input.arguments, MAX_ARGUMENT_DEPTH);
    // A strict-mode call says `null` for an optional property it leaves out (tools/strict-nulls.ts).
    const args = tooDeep ? input.arguments : dropAbsentNulls(row.parameters, input.arguments).arguments;
    const invalid = tooDeep ? [{ pointer: '/', message: `must not nest deeper than ${MAX_ARGUMENT_DEPTH} levels` }] : validate(args);
    for (const issue of invalid) {
      reasons.push({ code: 'invalid_arguments', message: issue.message, pointer: `/arguments${issue.pointer === '/' ? '' : issue.pointer}` });
    }
    // Rules read argument values, so they run only on arguments the schema accepted.
    if (invalid.length === 0) {
      for (const violation of evaluatePolicy(row.policy, args, principal.scopes)) {
        reasons.push({ code: 'policy_denied', message: violation.message, ...(violation.pointer ? { pointer: violation.pointer } : {}) });
      }
    }
    return { reasons, cached, args };
  }

  /** Audit, usage and what a cited call teaches in one transaction: a decision is recorded whole or not at all. */
  private async record(principal: Principal, input: AuthorizeInput, row: ToolForDecision | undefined, decision: Decision, auditReasons: unknown[], action: string): Promise<void> {
    const allowed = decision.decision === 'allow' && row !== undefined;
    const audit = {
      tenantId: principal.tenant,
      actor: principal.subject,
      action,
      at: new Date(),
      toolName: input.tool,
      toolVersion: row?.version ?? null,
      decision: decision.decision,
      reasons: auditReasons,
      discoveryId: input.discovery_id ?? null,
    };
    // Without a cited call to report, the decision joins the next group commit (audit entry and
    // usage count in one statement). A cited call needs a subject to count: anonymous callers cannot teach.
    const discoveryId = input.discovery_id;
    const subject = principal.subject;
    if (!allowed || !this.citedCalls.enabled || discoveryId === undefined || subject === null) {
      await this.decisions.write({ entry: audit, usage: allowed ? { toolId: row.id } : undefined });
      return;
    }
    await this.discoveries.settle(discoveryId);
    const learned = await this.db.transaction(async (tx) => {
      await recordDecisions(tx, [{ entry: audit, usage: { toolId: row.id } }]);
      return this.citedCalls.cited(tx, { toolId: row.id, toolName: row.name, tenantId: principal.tenant, subject, discoveryId });
    });
    if (learned) this.onLearned();
  }
}

function deny(name: string, version: string | null, reasons: Reason[]): Decision {
  return { decision: 'deny', reasons, tool: { name, version } };
}
