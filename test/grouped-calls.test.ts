import { describe, expect, it } from 'vitest';

import { type CallOutcome, GroupedCalls } from '../src/grouped-calls.js';

/** A run that records its groups and answers each input doubled, after a tick. */
function doubling(fail?: (input: number) => boolean) {
  const groups: number[][] = [];
  const run = async (inputs: number[]): Promise<CallOutcome<number>[]> => {
    groups.push(inputs);
    await new Promise((resolve) => setTimeout(resolve, 2));
    return inputs.map((x) => (fail?.(x) ? { ok: false, error: new Error(`no ${x}`) } : { ok: true, value: x * 2 }));
  };
  return { groups, run };
}

describe('grouped calls', () => {
  it('runs a lone call at once, and the calls that arrive meanwhile together, in order', async () => {
    const { groups, run } = doubling();
    const calls = new GroupedCalls(run, 100);
    expect(await calls.call(1)).toBe(2);
    expect(await Promise.all([10, 11, 12, 13].map((x) => calls.call(x)))).toEqual([20, 22, 24, 26]);
    expect(groups).toEqual([[1], [10], [11, 12, 13]]);
  });

  it('keeps groups within their bound', async () => {
    const { groups, run } = doubling();
    const calls = new GroupedCalls(run, 3);
    await Promise.all(Array.from({ length: 8 }, (_, i) => calls.call(i)));
    expect(groups.map((g) => g.length)).toEqual([1, 3, 3, 1]);
  });

  it("composes each group in turns across owners: behind one owner's flood, another's call goes in the next group", async () => {
    const { groups, run } = doubling();
    // Owners by hundreds: 100-199 is a, 200-299 is b.
    const calls = new GroupedCalls(run, 3, (x: number) => String(Math.floor(x / 100)));
    const results = await Promise.all([100, 101, 102, 103, 104, 105, 106, 200, 201].map((x) => calls.call(x)));
    expect(results).toEqual([200, 202, 204, 206, 208, 210, 212, 400, 402]);
    // First come, first served: [100], [101, 102, 103], [104, 105, 106], [200, 201].
    expect(groups).toEqual([[100], [101, 200, 102], [201, 103, 104], [105, 106]]);
  });

  it('fails only the calls whose outcome failed, and a whole group when its run throws; the next group still runs', async () => {
    const { run } = doubling((x) => x === 3);
    let throwOnce = true;
    const calls = new GroupedCalls(async (inputs: number[]) => {
      if (inputs.includes(7) && throwOnce) {
        throwOnce = false;
        throw new Error('run failed');
      }
      return run(inputs);
    }, 10);
    const outcomes = await Promise.allSettled([1, 2, 3, 4].map((x) => calls.call(x)));
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual([2, 4, 'no 3', 8]);
    // 0 runs alone; 7 and 8 arrive during its run and go together, in the group that throws.
    const first = calls.call(0);
    const second = await Promise.allSettled([7, 8].map((x) => calls.call(x)));
    expect(await first).toBe(0);
    expect(second.map((o) => (o.status === 'fulfilled' ? o.value : (o.reason as Error).message))).toEqual(['run failed', 'run failed']);
    expect(await calls.call(7)).toBe(14);
  });

  it('rejects the calls a run gave no outcome for, and refuses a bound that is not a positive integer', async () => {
    const calls = new GroupedCalls(async (inputs: number[]) => inputs.slice(1).map((x): CallOutcome<number> => ({ ok: true, value: x })), 10);
    await expect(calls.call(1)).rejects.toThrow('a group of 1 calls got 0 outcomes');
    expect(() => new GroupedCalls(async () => [], 0)).toThrow(RangeError);
    expect(() => new GroupedCalls(async () => [], 1.5)).toThrow(RangeError);
  });
});
