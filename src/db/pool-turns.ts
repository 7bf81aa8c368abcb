import { FairQueue } from '../fair-queue.js';

/** pg-pool's own message for a checkout that waited too long: connection-errors.ts reads it as an outage. */
const TIMEOUT_MESSAGE = 'timeout exceeded when trying to connect';

interface Waiter {
  grant(): void;
  /** Set when the waiter gave up: a released place skips it. */
  gaveUp: boolean;
}

/**
 * The places of a connection pool, handed out in turns across owners (tenants). A free place goes
 * at once; when every place is held, waiters queue per owner and each released place goes to the
 * next owner in rotation, so one tenant's burst delays another tenant's statement by about one
 * statement per place instead of by the whole burst (pg-pool alone serves waiters first come,
 * first served).
 */
export class TurnGate {
  private free: number;
  private readonly waiting = new FairQueue<Waiter>(Number.POSITIVE_INFINITY);
  private live = 0;

  constructor(places: number) {
    this.free = places;
  }

  /** Checkouts waiting for a place. */
  get queued(): number {
    return this.live;
  }

  /**
   * Resolves once a place is held for `owner`, to be given back with `release`. With `timeoutMs`
   * above 0, rejects after that long without a place, as pg-pool's own `connectionTimeoutMillis` does.
   */
  acquire(owner: string, timeoutMs = 0): Promise<void> {
    if (this.free > 0 && this.waiting.size === 0) {
      this.free -= 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const waiter: Waiter = {
        gaveUp: false,
        grant: () => {
          clearTimeout(timer);
          this.live -= 1;
          resolve();
        },
      };
      if (timeoutMs > 0) {
        timer = setTimeout(() => {
          waiter.gaveUp = true;
          this.live -= 1;
          reject(new Error(TIMEOUT_MESSAGE));
        }, timeoutMs);
        // Like pg-pool's own timer: a waiting checkout does not keep the process alive.
        timer.unref();
      }
      this.waiting.push(owner, waiter);
      this.live += 1;
    });
  }

  /** Gives a place back: to the next waiting owner in turn, else to the free places. */
  release(): void {
    for (let next = this.waiting.shift(); next !== undefined; next = this.waiting.shift()) {
      if (!next.gaveUp) return next.grant();
    }
    this.free += 1;
  }
}
