import type { Db } from '../db/client.js';
import { type DecisionRecord, recordDecisions } from './repository.js';

/** Decisions written per statement at most. */
export const DEFAULT_DECISION_BATCH = 256;

interface Waiting {
  record: DecisionRecord;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for decisions: a decision is answered only once its audit entry is committed, but
 * the decisions that arrive while one write is in flight go to the database together, in one
 * statement and one commit. Alone, a decision is written at once (no timer, no added latency);
 * under load, the batch grows with the time a commit takes, so throughput is no longer one commit
 * per call. A failed batch is retried one decision at a time, so each caller gets its own outcome
 * (a tool deleted mid-call fails only the decisions about it).
 */
export class DecisionWriter {
  private queue: Waiting[] = [];
  private draining = false;

  constructor(
    private readonly db: Db,
    private readonly maxBatch: number = DEFAULT_DECISION_BATCH,
  ) {}

  /** Resolves when the decision is committed; rejects with the database's error. */
  write(record: DecisionRecord): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ record, resolve, reject });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          await recordDecisions(this.db, batch.map((w) => w.record));
          for (const w of batch) w.resolve();
        } catch (error) {
          if (batch.length === 1) batch[0]!.reject(error);
          else await Promise.all(batch.map((w) => recordDecisions(this.db, [w.record]).then(w.resolve, w.reject)));
        }
      }
    } finally {
      this.draining = false;
    }
  }
}
