import type { RankingMode } from './fusion.js';
import type { DiscoveryLogEntry } from './log-repository.js';
import type { DiscoveryLogSink } from './service.js';

/** Answered discoveries by search mode: all, with no tool, flagged low-confidence. */
export type ShortlistQualityStats = Record<RankingMode, { total: number; empty: number; lowConfidence: number }>;

/**
 * Counts the quality of every answered shortlist (REST and MCP, cache hits included) on its way to
 * the discovery log: empty and low-confidence shortlists are the tuning signal an operator
 * watches (docs/ranking.md). Labels are the search mode only, never a tenant or a query.
 */
export class ShortlistQuality implements DiscoveryLogSink {
  readonly stats: ShortlistQualityStats = {
    hybrid: { total: 0, empty: 0, lowConfidence: 0 },
    lexical: { total: 0, empty: 0, lowConfidence: 0 },
    vector: { total: 0, empty: 0, lowConfidence: 0 },
  };

  constructor(private readonly log: DiscoveryLogSink) {}

  append(entry: DiscoveryLogEntry): void {
    const counts = this.stats[entry.searchMode as RankingMode];
    if (counts) {
      counts.total += 1;
      if (entry.shortlist.length === 0) counts.empty += 1;
      if (entry.lowConfidence) counts.lowConfidence += 1;
    }
    this.log.append(entry);
  }
}
