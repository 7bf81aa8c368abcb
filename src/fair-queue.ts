/**
 * A bounded queue shared by owners (tenants) and served in turns: each owner's items leave in the
 * order they came, and the owners take one item each in rotation. When the queue is full, the
 * owner holding the most items gives up its newest to a newcomer that holds fewer, so one owner
 * flooding the queue can delay another's item by at most one turn and can never lock it out.
 */
export class FairQueue<T> {
  private readonly byOwner = new Map<string, T[]>();
  /** Owners with waiting items, in serving order: the head is served next. */
  private turns: string[] = [];
  private count = 0;

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.count;
  }

  /**
   * Queues `item` for `owner`. Returns the item refused to make room, if any: `item` itself when
   * the queue is full and no owner holds more than `owner` would, else the newest item of the
   * owner that holds the most.
   */
  push(owner: string, item: T): T | undefined {
    let refused: T | undefined;
    if (this.count >= this.capacity) {
      const largest = this.largestOwner();
      const held = this.byOwner.get(owner)?.length ?? 0;
      if (largest === undefined || this.byOwner.get(largest)!.length <= held + 1) return item;
      refused = this.removeNewest(largest);
    }
    const items = this.byOwner.get(owner);
    if (items) items.push(item);
    else {
      this.byOwner.set(owner, [item]);
      this.turns.push(owner);
    }
    this.count += 1;
    return refused;
  }

  /** The item `shift` would return, left in place. */
  peek(): T | undefined {
    const owner = this.turns[0];
    return owner === undefined ? undefined : this.byOwner.get(owner)![0];
  }

  /** The next item: the oldest of the owner whose turn it is; that owner then waits for every other. */
  shift(): T | undefined {
    const owner = this.turns.shift();
    if (owner === undefined) return undefined;
    const items = this.byOwner.get(owner)!;
    const item = items.shift()!;
    this.count -= 1;
    if (items.length > 0) this.turns.push(owner);
    else this.byOwner.delete(owner);
    return item;
  }

  /** Every item, emptying the queue. */
  drain(): T[] {
    const all = [...this.byOwner.values()].flat();
    this.byOwner.clear();
    this.turns = [];
    this.count = 0;
    return all;
  }

  private largestOwner(): string | undefined {
    let largest: string | undefined;
    for (const [owner, items] of this.byOwner) if (largest === undefined || items.length > this.byOwner.get(largest)!.length) largest = owner;
    return largest;
  }

  private removeNewest(owner: string): T {
    const items = this.byOwner.get(owner)!;
    const item = items.pop()!;
    this.count -= 1;
    if (items.length === 0) {
      this.byOwner.delete(owner);
      this.turns = this.turns.filter((o) => o !== owner);
    }
    return item;
  }
}
