/** A PostgreSQL WAL position (`pg_lsn` text such as `16/B374D848`) as a byte offset. */
export function parseLsn(text: string): bigint {
  const match = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(text);
  if (!match) throw new Error(`not a WAL position: ${text}`);
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/**
 * How far, in time, a replica is behind its primary. The primary's WAL position is sampled every
 * check; a replica that has replayed up to a sample holds everything committed before that sample
 * was taken. Comparing positions (not `pg_last_xact_replay_timestamp()`) keeps an idle primary
 * from looking like lag and is immune to clock skew between the servers. The result is an upper
 * bound: it can overstate the lag by up to one sampling interval.
 */
export class LagClock {
  private samples: { at: number; lsn: bigint }[] = [];

  /** @param keepMs how much history to keep; lags beyond it are reported as at least that old. */
  constructor(private readonly keepMs: number) {}

  /** Records the primary's current WAL position, read at `at` (ms). */
  record(at: number, lsn: bigint): void {
    this.samples.push({ at, lsn });
    // Keep one sample older than the window, so a long lag is still measured from it.
    while (this.samples.length > 2 && this.samples[1]!.at < at - this.keepMs) this.samples.shift();
  }

  /**
   * Milliseconds of commits a replica that replayed up to `replayed` may be missing at `now`: 0 when
   * it holds everything the primary had at the last sample; undefined before any sample.
   */
  lag(replayed: bigint, now: number): number | undefined {
    const latest = this.samples.at(-1);
    if (!latest) return undefined;
    if (replayed >= latest.lsn) return 0;
    for (let i = this.samples.length - 2; i >= 0; i -= 1) {
      const sample = this.samples[i]!;
      if (replayed >= sample.lsn) return now - sample.at;
    }
    return now - this.samples[0]!.at;
  }
}
