import type { Static } from 'typebox';

import type { LearnedAlias } from '../tools/schemas.js';
import type { LearnedAliasRow } from './repository.js';

/** The wire view of a learned alias: what it is, who taught it, whether it ranks and why not. */
export function learnedAliasView(row: LearnedAliasRow): Static<typeof LearnedAlias> {
  return {
    id: row.id,
    query: row.query,
    misses: row.misses,
    support: row.support,
    taught_by: row.taughtBy.map((t) => ({ subject: t.subject, at: t.at.toISOString() })),
    active: row.ranks,
    review: row.review === 'none' ? (row.needsApproval ? 'pending' : 'not_required') : row.review,
    reviewed_by: row.reviewedBy,
    reviewed_at: row.reviewedAt?.toISOString() ?? null,
    first_seen: row.firstSeen.toISOString(),
    last_seen: row.lastSeen.toISOString(),
  };
}
