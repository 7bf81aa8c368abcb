import { appendAudit } from '../audit/repository.js';
import { isPublisher, type Principal } from '../auth/principal.js';
import type { CitedCall, CitedCallListener } from '../authorize/service.js';
import type { Config } from '../config.js';
import type { Db, Executor } from '../db/client.js';
import { AppError, toolNotFound } from '../errors.js';
import { findTool } from '../tools/repository.js';
import * as repo from './repository.js';
import { unlearnable } from './rules.js';

const learnedAliasNotFound = (name: string, id: number) => new AppError('not_found', `learned alias ${id} not found for tool '${name}'`);

/**
 * Learning settings plus the legs discovery ranks with by default (a miss counts only against
 * those) and how long audit records are kept (0: for good), which bounds what the misses report can judge.
 */
type LearningSettings = Config['learning'] & { defaultMode: 'hybrid' | 'lexical'; auditLogDays: number };

/**
 * Learning from calls: what an allowed call citing a discovery teaches (reported by authorize,
 * inside its transaction), publishers' view of what was learned, and the hourly ageing of
 * learned aliases.
 */
export class LearningService implements CitedCallListener {
  constructor(
    private readonly db: Db,
    private readonly limits: LearningSettings,
    /** Called when learned texts changed (to re-embed). */
    private readonly onChanged: () => void = () => undefined,
    /** Where reports read (the read replica when configured). */
    private readonly reads: Executor = db,
  ) {}

  get enabled(): boolean {
    return this.limits.enabled;
  }

  /** A miss teaches the called tool the query of the caller's own discovery, unless the rules say not. */
  async cited(tx: Executor, call: CitedCall): Promise<boolean> {
    const discovery = await repo.findOwnDiscovery(tx, call.tenantId, call.subject, call.discoveryId);
    if (!discovery || unlearnable(discovery, call.toolName, this.limits.defaultMode) !== undefined) return false;
    return repo.teach(tx, { toolId: call.toolId, tenantId: call.tenantId, query: discovery.query, subject: call.subject, discoveryId: call.discoveryId }, this.limits);
  }

  /**
   * Deletes votes and aliases past their TTL (the service runs it hourly) and refreshes the
   * affected tools' indexed text, one transaction per tool: as one transaction over every tenant,
   * 16,000 expired votes of 500 tools held in-process PGlite's one backend for 1.7 s. A tool whose
   * transaction fails is left for the next run; the others go on. Stops between tools once
   * `signal` is aborted. Returns the tools it went through.
   */
  async expire(signal?: AbortSignal): Promise<number> {
    let done = 0;
    let failure: unknown;
    try {
      for (const toolId of await repo.toolsToExpire(this.db, this.limits.ttlDays)) {
        if (signal?.aborted) break;
        try {
          await this.db.transaction(async (tx) => {
            await repo.expireLearnedOf(tx, toolId, this.limits.ttlDays);
            await repo.refreshLearnedText(tx, toolId, this.limits);
          });
          done += 1;
        } catch (error) {
          failure ??= error;
        }
      }
    } finally {
      if (done > 0) this.onChanged();
    }
    if (failure !== undefined) throw failure;
    return done;
  }

  private async publishersTool(principal: Principal, name: string) {
    if (!isPublisher(principal)) throw new AppError('forbidden', "this operation needs scope 'registry:publish'");
    const row = await findTool(this.db, principal.tenant, name);
    if (!row) throw toolNotFound(name);
    return row;
  }

  async list(principal: Principal, name: string): Promise<repo.LearnedAliasRow[]> {
    const row = await this.publishersTool(principal, name);
    return repo.listLearned(this.db, row.id, this.limits);
  }

  /** Lists a tool's learned aliases by id (for a tool the caller already proved it may see). */
  listFor(toolId: number): Promise<repo.LearnedAliasRow[]> {
    return repo.listLearned(this.db, toolId, this.limits);
  }

  async remove(principal: Principal, name: string, aliasId: number): Promise<void> {
    const row = await this.publishersTool(principal, name);
    const removed = await this.db.transaction(async (tx) => {
      const deleted = await repo.deleteLearned(tx, row.id, aliasId);
      if (deleted) await repo.refreshLearnedText(tx, row.id, this.limits);
      return deleted;
    });
    if (!removed) throw learnedAliasNotFound(name, aliasId);
    this.onChanged();
  }

  /**
   * A publisher approves (the alias may rank once enough subjects taught it) or rejects (it never
   * ranks and is not taught again) one learned alias; audited. Returns the alias as it is now.
   */
  async review(principal: Principal, name: string, aliasId: number, review: 'approved' | 'rejected'): Promise<repo.LearnedAliasRow> {
    const row = await this.publishersTool(principal, name);
    const { found, changed } = await this.db.transaction(async (tx) => {
      if (!(await repo.reviewLearned(tx, row.id, aliasId, review, principal.subject))) return { found: false, changed: false };
      await appendAudit(tx, {
        tenantId: principal.tenant,
        actor: principal.subject,
        action: review === 'approved' ? 'approve_alias' : 'reject_alias',
        toolName: row.name,
        toolVersion: row.version,
        details: { learned_alias_id: aliasId },
      });
      return { found: true, changed: await repo.refreshLearnedText(tx, row.id, this.limits) };
    });
    if (!found) throw learnedAliasNotFound(name, aliasId);
    if (changed) this.onChanged();
    const alias = (await repo.listLearned(this.db, row.id, this.limits)).find((a) => a.id === aliasId);
    if (!alias) throw learnedAliasNotFound(name, aliasId);
    return alias;
  }

  report(tenantId: string, sinceDays: number, limit: number) {
    // A discovery older than the audit log's retention lost the records of its calls: it cannot be called unanswered.
    const judgedDays = this.limits.auditLogDays > 0 ? Math.min(sinceDays, this.limits.auditLogDays) : sinceDays;
    return Promise.all([
      repo.missedTools(this.reads, tenantId, sinceDays, limit),
      repo.unansweredDiscoveries(this.reads, tenantId, judgedDays, 5, limit),
    ]);
  }
}
