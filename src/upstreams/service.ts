import type { Static } from 'typebox';

import { type Principal,PUBLISH_SCOPE } from '../auth/principal.js';
import type { UpstreamConfig } from '../config.js';
import type { Db } from '../db/client.js';
import type { UpstreamRow } from '../db/schema.js';
import { AppError } from '../errors.js';
import type { ToolService } from '../tools/service.js';
import { admitUrl } from './allow-list.js';
import { type UpstreamClients, UpstreamError, type UpstreamTarget } from './client.js';
import * as repo from './repository.js';
import type { UpstreamBody, UpstreamSynced, UpstreamView } from './schemas.js';
import { type HeaderSealer, sealContext } from './secrets.js';
import type { SyncOutcome, UpstreamSync } from './sync.js';

type UpstreamInput = Static<typeof UpstreamBody>;
type UpstreamViewBody = Static<typeof UpstreamView>;
type UpstreamSyncedBody = Static<typeof UpstreamSynced>;

interface UpstreamLog {
  info(object: object, message: string): void;
  warn(object: object, message: string): void;
}

const upstreamNotFound = (name: string) => new AppError('not_found', `upstream '${name}' not found`);

/** The view of an upstream: never its headers, only whether it has some. */
function upstreamView(row: UpstreamRow, activeTools: number): UpstreamViewBody {
  return {
    name: row.name,
    url: row.url,
    status: row.status,
    tools: activeTools,
    synced_at: row.syncedAt?.toISOString() ?? null,
    last_error: row.lastError,
    required_scopes: row.requiredScopes,
    sensitivity: row.sensitivity,
    side_effects: row.sideEffects,
    has_headers: row.headers !== null,
    created_at: row.createdAt.toISOString(),
  };
}

/**
 * A tenant's upstream MCP servers: registration (allow-listed URL, sealed headers), sync, removal.
 * Syncs of one upstream on one replica run one at a time (a second request joins the running one).
 */
export class UpstreamService {
  private readonly running = new Map<string, Promise<SyncOutcome>>();

  constructor(
    private readonly db: Db,
    private readonly tools: ToolService,
    private readonly sync: UpstreamSync,
    readonly clients: UpstreamClients,
    private readonly sealer: () => HeaderSealer | undefined,
    private readonly config: UpstreamConfig,
    private readonly log: UpstreamLog,
  ) {}

  /** POST: registers the upstream and syncs it at once (a failed first sync leaves it degraded, still registered). */
  async register(principal: Principal, input: UpstreamInput): Promise<UpstreamSyncedBody> {
    const url = admitUrl(input.url, this.config.allowedUrls);
    let sealed: string | null = null;
    if (input.headers && Object.keys(input.headers).length > 0) {
      const sealer = this.sealer();
      if (!sealer) {
        throw new AppError('validation_failed', 'headers cannot be stored: set UPSTREAM_SECRET_KEY (32 bytes, base64 or hex) to encrypt them', [{ pointer: '/headers', message: 'UPSTREAM_SECRET_KEY is unset' }]);
      }
      sealed = sealer.seal(input.headers, sealContext(principal.tenant, input.name));
    }
    const row = await repo.insertUpstream(this.db, {
      tenantId: principal.tenant,
      name: input.name,
      url: url.href,
      headers: sealed,
      requiredScopes: [...new Set(input.required_scopes ?? [])].sort(),
      sensitivity: input.sensitivity ?? null,
      sideEffects: input.side_effects ?? null,
      status: 'pending',
      toolCount: 0,
      revision: 1,
      createdBy: principal.subject,
    });
    if (!row) throw new AppError('conflict', `upstream '${input.name}' already exists; DELETE it first to register it again`, [{ pointer: '/name', message: 'already registered' }]);
    return this.syncNow(principal, input.name);
  }

  async list(principal: Principal): Promise<UpstreamViewBody[]> {
    const rows = await repo.listUpstreams(this.db, principal.tenant);
    return Promise.all(rows.map(async (row) => upstreamView(row, await repo.activeToolCount(this.db, row.tenantId, row.name))));
  }

  async get(principal: Principal, name: string): Promise<UpstreamViewBody> {
    const row = await repo.findUpstream(this.db, principal.tenant, name);
    if (!row) throw upstreamNotFound(name);
    return upstreamView(row, await repo.activeToolCount(this.db, row.tenantId, name));
  }

  /** DELETE: retires every tool it serves, forgets the upstream and closes its session. */
  async remove(principal: Principal, name: string): Promise<void> {
    const row = await repo.findUpstream(this.db, principal.tenant, name);
    if (!row) throw upstreamNotFound(name);
    for (const toolName of (await repo.servedTools(this.db, principal.tenant, name)).keys()) {
      try {
        const tool = await this.tools.get(principal, toolName);
        if (tool.status === 'active') await this.tools.retire(principal, toolName, undefined);
      } catch (error) {
        if (!(error instanceof AppError && error.code === 'not_found')) throw error;
      }
    }
    await repo.deleteUpstream(this.db, principal.tenant, name);
    this.clients.drop(targetPrefix(principal.tenant, name));
    this.log.info({ tenant: principal.tenant, upstream: name }, 'upstream removed; its tools are retired');
  }

  /** POST .../sync, and the registration's first sync: the upstream and what the sync did. */
  async syncNow(principal: Principal, name: string): Promise<UpstreamSyncedBody> {
    const sync = await this.syncOne(principal, name);
    return { ...(await this.get(principal, name)), sync };
  }

  /** Syncs one upstream; joins a sync of it already running on this replica. */
  syncOne(principal: Principal, name: string): Promise<SyncOutcome> {
    const key = targetPrefix(principal.tenant, name);
    const running = this.running.get(key);
    if (running) return running;
    const work = this.runSync(principal, name).finally(() => this.running.delete(key));
    this.running.set(key, work);
    return work;
  }

  private async runSync(principal: Principal, name: string): Promise<SyncOutcome> {
    const row = await repo.findUpstream(this.db, principal.tenant, name);
    if (!row) throw upstreamNotFound(name);
    let outcome: SyncOutcome;
    try {
      const { tools, server } = await this.clients.list(this.target(row));
      outcome = await this.sync.apply(principal, row, tools, server);
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      // Unreachable: its last known tools stay discoverable; calls fail with 502/503 meanwhile.
      await repo.recordSync(this.db, row.tenantId, name, { status: 'degraded', lastError: error.message });
      outcome = { added: [], changed: [], retired: [], errors: [{ tool: null, message: error.message }] };
      this.log.warn({ tenant: row.tenantId, upstream: name, error: error.message }, 'upstream sync failed; marked degraded');
      return outcome;
    }
    const toolCount = await repo.activeToolCount(this.db, row.tenantId, name);
    await repo.recordSync(this.db, row.tenantId, name, { status: 'ok', toolCount, lastError: null, syncedAt: new Date() });
    this.log.info({ tenant: row.tenantId, upstream: name, added: outcome.added, changed: outcome.changed, retired: outcome.retired, errors: outcome.errors }, 'upstream synced');
    return outcome;
  }

  /** The periodic sync: every upstream of every tenant, one after another, as the tenant's sync principal. */
  async syncAll(signal?: AbortSignal): Promise<void> {
    for (const row of await repo.listUpstreams(this.db)) {
      if (signal?.aborted) return;
      await this.syncOne(syncPrincipal(row.tenantId), row.name).catch((error: unknown) => this.log.warn({ err: error, upstream: row.name }, 'upstream sync failed'));
    }
  }

  /** An open session heard `notifications/tools/list_changed`. */
  toolsChanged(target: UpstreamTarget): void {
    void this.syncOne(syncPrincipal(target.tenant), target.name).catch((error: unknown) => this.log.warn({ err: error, upstream: target.name }, 'upstream sync after list_changed failed'));
  }

  /** How the client reaches the upstream: its URL and opened headers, keyed by its revision. */
  target(row: UpstreamRow): UpstreamTarget {
    let headers: Record<string, string> = {};
    if (row.headers !== null) {
      const sealer = this.sealer();
      if (!sealer) throw new UpstreamError('protocol', 'the key that sealed this upstream\'s headers is not configured (UPSTREAM_SECRET_KEY)');
      try {
        headers = sealer.open(row.headers, sealContext(row.tenantId, row.name));
      } catch {
        throw new UpstreamError('protocol', 'this upstream\'s headers do not open with the configured UPSTREAM_SECRET_KEY');
      }
    }
    return { key: `${targetPrefix(row.tenantId, row.name)}${row.revision}:${row.createdAt.getTime()}`, tenant: row.tenantId, name: row.name, url: row.url, headers };
  }
}

/** Who the background syncs act as: the tenant's publisher, named so the audit log says it was the sync. */
function syncPrincipal(tenant: string): Principal {
  return { tenant, subject: 'upstream-sync', scopes: [PUBLISH_SCOPE] };
}

const targetPrefix = (tenant: string, name: string) => `${tenant}\u0000${name}\u0000`;
