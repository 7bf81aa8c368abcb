import type { Db } from '../db/client.js';
import { isCancelled, isConnectionError } from '../db/connection-errors.js';
import { type CallOutcome, GroupedCalls } from '../grouped-calls.js';
import { type DecisionRecord, recordDecisions } from './repository.js';

/** Decisions written per statement at most. */
const DEFAULT_DECISION_BATCH = 256;

/**
 * Group commit for decisions: a decision is answered only once its audit entry is committed, but
 * the decisions that arrive while one write is in flight go to the database together, in one
 * statement and one commit. Alone, a decision is written at once (no timer, no added latency);
 * under load, the batch grows with the time a commit takes, so throughput is no longer one commit
 * per call. A batch that a statement error failed is retried one decision at a time, so each caller
 * gets its own outcome (a tool deleted mid-call fails only the decisions about it); one that failed
 * because the database is unreachable fails whole, at once: retrying it call by call would only
 * send a database that is away one attempt per waiting decision.
 */
export class DecisionWriter {
  private readonly writes: GroupedCalls<DecisionRecord, void>;

  constructor(db: Db, maxBatch: number = DEFAULT_DECISION_BATCH) {
    this.writes = new GroupedCalls(async (records) => {
      try {
        await recordDecisions(db, records);
        return records.map((): CallOutcome<void> => ({ ok: true, value: undefined }));
      } catch (error) {
        // A cancelled statement (past its bound, behind a lock) would only wait as long again for
        // each record in turn: fail the group at once, as when the database is away.
        if (records.length === 1 || isConnectionError(error) || isCancelled(error)) throw error;
        return Promise.all(
          records.map((record) =>
            recordDecisions(db, [record]).then(
              (): CallOutcome<void> => ({ ok: true, value: undefined }),
              (failure: unknown): CallOutcome<void> => ({ ok: false, error: failure }),
            ),
          ),
        );
      }
    }, maxBatch, (record) => record.entry.tenantId);
  }

  /** Resolves when the decision is committed; rejects with the database's error. */
  write(record: DecisionRecord): Promise<void> {
    return this.writes.call(record);
  }
}
