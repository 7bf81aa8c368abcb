/** How many of something are running per key (a tenant, a session): a key is forgotten at zero. */
export class InFlight<K> {
  private readonly counts = new Map<K, number>();

  count(key: K): number {
    return this.counts.get(key) ?? 0;
  }

  enter(key: K): void {
    this.counts.set(key, this.count(key) + 1);
  }

  /** One ended; returns how many are still running for `key`. */
  leave(key: K): number {
    const left = this.count(key) - 1;
    if (left > 0) this.counts.set(key, left);
    else this.counts.delete(key);
    return Math.max(left, 0);
  }
}
