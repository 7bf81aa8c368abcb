import { describe, expect, it } from 'vitest';

import { FairQueue } from '../src/fair-queue.js';

const drainInOrder = (queue: FairQueue<string>): string[] => {
  const out: string[] = [];
  for (let item = queue.shift(); item !== undefined; item = queue.shift()) out.push(item);
  return out;
};

describe('FairQueue', () => {
  it('serves owners in turns, each owner first come first served', () => {
    const queue = new FairQueue<string>(10);
    for (const item of ['a1', 'a2', 'a3', 'a4']) expect(queue.push('a', item)).toBeUndefined();
    queue.push('b', 'b1');
    queue.push('c', 'c1');
    queue.push('b', 'b2');
    expect(queue.size).toBe(7);
    expect(queue.peek()).toBe('a1');
    expect(drainInOrder(queue)).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
    expect(queue.size).toBe(0);
    expect(queue.peek()).toBeUndefined();
  });

  it('puts an owner that comes back after its items ran out at the end of the turns', () => {
    const queue = new FairQueue<string>(10);
    queue.push('a', 'a1');
    queue.push('b', 'b1');
    expect(queue.shift()).toBe('a1');
    queue.push('a', 'a2');
    queue.push('c', 'c1');
    expect(drainInOrder(queue)).toEqual(['b1', 'a2', 'c1']);
  });

  it("when full, takes the newest item of the owner holding the most to admit another owner's", () => {
    const queue = new FairQueue<string>(4);
    for (const item of ['a1', 'a2', 'a3', 'a4']) queue.push('a', item);
    expect(queue.push('b', 'b1')).toBe('a4');
    expect(queue.push('c', 'c1')).toBe('a3');
    expect(queue.size).toBe(4);
    // a holds 2, b and c 1 each: a newcomer that would hold as many as the largest is refused.
    expect(queue.push('a', 'a5')).toBe('a5');
    expect(queue.push('b', 'b2')).toBe('b2');
    expect(queue.push('d', 'd1')).toBe('a2');
    expect(drainInOrder(queue)).toEqual(['a1', 'b1', 'c1', 'd1']);
  });

  it('drops an owner from the turns once its last item is taken to make room', () => {
    const queue = new FairQueue<string>(2);
    queue.push('a', 'a1');
    queue.push('a', 'a2');
    expect(queue.push('b', 'b1')).toBe('a2');
    expect(queue.shift()).toBe('a1');
    expect(queue.push('c', 'c1')).toBeUndefined();
    expect(queue.push('d', 'd1')).toBe('d1');
    expect(drainInOrder(queue)).toEqual(['b1', 'c1']);
  });

  it('drains every item', () => {
    const queue = new FairQueue<string>(5);
    queue.push('a', 'a1');
    queue.push('b', 'b1');
    queue.push('a', 'a2');
    expect(queue.drain().sort()).toEqual(['a1', 'a2', 'b1']);
    expect(queue.size).toBe(0);
    expect(queue.shift()).toBeUndefined();
  });
  it('keeps every owner in order through a long queue, with items pushed while it drains', () => {
    // Long enough that the queue drops its spent front several times (at 1,024 items and more).
    const queue = new FairQueue<string>(Number.POSITIVE_INFINITY);
    for (let i = 0; i < 5_000; i += 1) queue.push('a', `a${i}`);
    queue.push('b', 'b0');
    const served: string[] = [];
    for (;;) {
      const peeked = queue.peek();
      const next = queue.shift();
      expect(next).toBe(peeked);
      if (next === undefined) break;
      served.push(next);
      if (served.length % 1_000 === 0) queue.push('b', `b${served.length}`);
    }
    expect(served).toHaveLength(5_006);
    const a = served.filter((x) => x.startsWith('a'));
    expect(a).toEqual(Array.from({ length: 5_000 }, (_, i) => `a${i}`));
    expect(served.filter((x) => x.startsWith('b'))).toEqual(['b0', 'b1000', 'b2000', 'b3000', 'b4000', 'b5000']);
    // b's items each came out on the turn after they were pushed, not after a's backlog.
    expect(served.slice(0, 3)).toEqual(['a0', 'b0', 'a1']);
    expect(served.indexOf('b2000')).toBe(served.indexOf('a1998') + 1);
    expect(queue.size).toBe(0);
  });
});
