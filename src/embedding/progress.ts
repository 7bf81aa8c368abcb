import type { Db } from '../db/client.js';
import type { EmbeddingIndexer } from './indexer.js';
import { indexCounts } from './repository.js';

/** How far indexing is for some tools, with the service-wide backlog and the recent rate. */
export interface IndexProgressView {
  model: string | null;
  active: number;
  indexed: number;
  pending: number;
  failed: number;
  backlog: number;
  texts_per_second: number | null;
  tools_per_second: number | null;
  eta_seconds: number | null;
}

const rounded = (value: number | undefined) => (value === undefined ? null : Math.round(value * 10) / 10);

/**
 * Index progress of a tenant's active tools (or one sync source's). The ETA is the service-wide
 * backlog's at the recent rate: the indexer works through every tenant's stale tools in id order,
 * so it bounds when these are done. Without an embedder nothing waits: every tool counts as indexed.
 */
export async function indexProgress(db: Db, indexer: EmbeddingIndexer | undefined, scope: { tenantId: string; source?: string }): Promise<IndexProgressView> {
  if (!indexer) {
    const { active } = await indexCounts(db, '', scope);
    return { model: null, active, indexed: active, pending: 0, failed: 0, backlog: 0, texts_per_second: null, tools_per_second: null, eta_seconds: 0 };
  }
  const [counts, backlog] = await Promise.all([indexCounts(db, indexer.model, scope), indexer.backlog()]);
  const { throughput } = indexer;
  return {
    model: indexer.model,
    ...counts,
    backlog: backlog.pending,
    texts_per_second: rounded(throughput.textsPerSecond),
    tools_per_second: rounded(throughput.toolsPerSecond),
    eta_seconds: counts.pending === 0 ? 0 : (throughput.etaSeconds(backlog.pending) ?? null),
  };
}
