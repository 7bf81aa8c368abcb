/** When a background job runs: a pass at start, then one every `everyMs` (absent: none). */
interface JobSchedule {
  atStart: boolean;
  everyMs?: number;
}

/**
 * A service's periodic (or one-off) work behind one start/stop: one pass at a time (a tick while
 * one runs is skipped), failures reported and retried at the next tick, timers that never keep the
 * process alive, and a stop that aborts the pass's signal and waits for it, so nothing touches the
 * database once the app closes it.
 */
export class BackgroundJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly stopping = new AbortController();

  constructor(
    /** One pass; it should return early once `signal` is aborted. */
    private readonly pass: (signal: AbortSignal) => Promise<unknown>,
    private readonly schedule: JobSchedule,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    if (this.schedule.everyMs !== undefined) {
      this.timer = setInterval(() => this.tick(), this.schedule.everyMs);
      this.timer.unref();
    }
    if (this.schedule.atStart) this.tick();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    clearInterval(this.timer);
    await this.running;
  }

  private tick(): void {
    if (this.running || this.stopping.signal.aborted) return;
    this.running = this.pass(this.stopping.signal)
      .then(() => undefined, this.onError)
      .finally(() => {
        this.running = undefined;
      });
  }
}
