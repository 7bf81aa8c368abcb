import type { FastifyBaseLogger } from 'fastify';

import type { Db } from '../db/client.js';
import { isConnectionError, sqlState } from '../db/connection-errors.js';
import { appendDiscoveries, type DiscoveryLogEntry } from './log-repository.js';

interface DiscoveryLogOptions {
  /** Entries held in memory at most; beyond, new entries are dropped and counted. */
  maxBuffered: number;
  /** Rows per INSERT. */
  batchSize: number;
  /** How long an entry may wait before its batch is written. */
  flushMs: number;
}

const DEFAULT_DISCOVERY_LOG_OPTIONS: DiscoveryLogOptions = { maxBuffered: 10_000, batchSize: 500, flushMs: 200 };

/** Counters the metrics endpoint reads. */
export interface DiscoveryLogStats {
  written: number;
  dropped: number;
  failedFlushes: number;
  /** Entries the database refused on their own (one a batch could not store): dropped, each logged. */
  refused: number;
  buffered: number;
}

// SQLSTATE classes that put the fault in the entry itself: data exception (NUL, an unpaired
// surrogate in jsonb), integrity constraint, program limit (a value too large to index).
const ENTRY_FAULT_CLASSES = new Set(['22', '23', '54']);

/**
 * Whether a failed write may succeed later as it is (its entries are kept): anything but an
 * entry's own fault, so a database that is down or a table being migrated loses nothing.
 */
function transient(error: unknown): boolean {
  if (isConnectionError(error)) return true;
  const state = sqlState(error);
  // No SQLSTATE and no lost connection: the driver could not even send the entry (its serialization failed).
  return state !== undefined && !ENTRY_FAULT_CLASSES.has(state.slice(0, 2));
}

/**
 * The discovery log, written off the request path: entries are buffered (bounded) and inserted
 * in multi-row batches every `flushMs`, on demand, and on shutdown. Each entry carries its own
 * timestamp, so the log reads as if written one by one. A failed write keeps its entries for the
 * next flush while the buffer has room; whatever does not fit is dropped and counted, never
 * allowed to slow or fail a discovery. A batch the database refuses for its content is written
 * again entry by entry, and an entry refused on its own is dropped, counted and logged: one bad
 * entry never blocks the others (issue 32, finding 2: one NUL in a subject failed every flush,
 * for every tenant, until restart).
 */
export class DiscoveryLogWriter {
  readonly stats: DiscoveryLogStats = { written: 0, dropped: 0, failedFlushes: 0, refused: 0, buffered: 0 };
  private buffer: DiscoveryLogEntry[] = [];
  /** Ids buffered or being written: a reader that needs one waits for its write. */
  private readonly pendingIds = new Set<string>();
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Db,
    private readonly log: Pick<FastifyBaseLogger, 'warn'>,
    private readonly options: DiscoveryLogOptions = DEFAULT_DISCOVERY_LOG_OPTIONS,
  ) {}

  /** Queues one entry (never blocks, never throws). */
  append(entry: DiscoveryLogEntry): void {
    if (this.buffer.length >= this.options.maxBuffered) {
      this.stats.dropped += 1;
      return;
    }
    this.buffer.push({ ...entry, at: entry.at ?? new Date() });
    this.pendingIds.add(entry.id);
    this.stats.buffered = this.buffer.length;
    if (this.buffer.length >= this.options.batchSize) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.options.flushMs);
  }

  /** Whether the entry with this id is not yet in the database. */
  isPending(id: string): boolean {
    return this.pendingIds.has(id);
  }

  /** Resolves once the entry with this id is in the database (at once when it already is, or was dropped). */
  async settle(id: string): Promise<void> {
    while (this.pendingIds.has(id)) {
      const before = this.pendingIds.size;
      await this.flush();
      // A failed write keeps the entry: do not spin on a database that is down.
      if (this.pendingIds.has(id) && this.pendingIds.size >= before) return;
    }
  }

  /** Writes everything buffered so far (after any write in progress). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.writing) await this.writing;
    if (this.buffer.length === 0) return;
    this.writing = this.writeAll().finally(() => {
      this.writing = undefined;
    });
    await this.writing;
  }

  private async writeAll(): Promise<void> {
    const entries = this.buffer;
    this.buffer = [];
    for (let i = 0; i < entries.length; i += this.options.batchSize) {
      const failure = await this.write(entries.slice(i, i + this.options.batchSize));
      if (!failure) continue;
      this.stats.failedFlushes += 1;
      const unwritten = [...failure.unwritten, ...entries.slice(i + this.options.batchSize)];
      this.log.warn({ err: failure.error, entries: unwritten.length }, 'writing the discovery log failed; entries kept for the next flush');
      // Put the unwritten entries back in front, as far as the buffer has room.
      const kept = [...unwritten, ...this.buffer];
      const room = this.options.maxBuffered;
      for (const entry of kept.slice(room)) this.pendingIds.delete(entry.id);
      this.stats.dropped += Math.max(0, kept.length - room);
      this.buffer = kept.slice(0, room);
      if (this.buffer.length > 0) this.timer ??= setTimeout(() => void this.flush(), Math.max(this.options.flushMs, 1_000));
      break;
    }
    this.stats.buffered = this.buffer.length;
  }

  /**
   * Writes one batch; a batch refused for its content, entry by entry. Returns what is left
   * unwritten when the database itself failed (down, restarting), to be tried again.
   */
  private async write(batch: DiscoveryLogEntry[]): Promise<{ error: unknown; unwritten: DiscoveryLogEntry[] } | undefined> {
    try {
      await appendDiscoveries(this.db, batch);
      this.written(batch);
      return undefined;
    } catch (error) {
      if (transient(error)) return { error, unwritten: batch };
    }
    for (const [index, entry] of batch.entries()) {
      try {
        await appendDiscoveries(this.db, [entry]);
        this.written([entry]);
      } catch (error) {
        if (transient(error)) return { error, unwritten: batch.slice(index) };
        this.stats.refused += 1;
        this.pendingIds.delete(entry.id);
        this.log.warn({ err: error, discoveryId: entry.id, tenantId: entry.tenantId }, 'the database refused a discovery log entry; dropped it, the rest of its batch is written');
      }
    }
    return undefined;
  }

  private written(entries: DiscoveryLogEntry[]): void {
    this.stats.written += entries.length;
    for (const entry of entries) this.pendingIds.delete(entry.id);
  }
}
