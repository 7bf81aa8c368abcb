import { describe, expect, it } from 'vitest';

import { BackgroundJob } from '../src/background-job.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `condition` holds (a loaded machine delays timers), failing after two seconds. */
async function until(condition: () => boolean): Promise<void> {
  for (const started = Date.now(); !condition(); await sleep(5)) if (Date.now() - started > 2_000) throw new Error('condition never held');
}

// Real timers, short intervals: what is checked is the schedule and the stop, not the clock.
describe('BackgroundJob', () => {
  it('runs a pass at start and then on every interval', async () => {
    let passes = 0;
    const job = new BackgroundJob(async () => (passes += 1), { atStart: true, everyMs: 20 }, () => undefined);
    job.start();
    expect(passes).toBe(1);
    await until(() => passes >= 3);
    await job.stop();
  });

  it('runs one pass at a time: a tick while one runs is skipped', async () => {
    let running = 0;
    let overlapped = false;
    let passes = 0;
    const job = new BackgroundJob(async () => {
      running += 1;
      overlapped ||= running > 1;
      passes += 1;
      await sleep(60);
      running -= 1;
    }, { atStart: true, everyMs: 10 }, () => undefined);
    job.start();
    await sleep(100);
    await job.stop();
    expect(overlapped).toBe(false);
    expect(passes).toBeLessThanOrEqual(2);
  });

  it('without an interval runs once, and not at all without atStart', async () => {
    let passes = 0;
    const once = new BackgroundJob(async () => (passes += 1), { atStart: true }, () => undefined);
    const never = new BackgroundJob(async () => (passes += 10), { atStart: false }, () => undefined);
    once.start();
    never.start();
    await sleep(30);
    await Promise.all([once.stop(), never.stop()]);
    expect(passes).toBe(1);
  });

  it('stop aborts the running pass\'s signal and waits for it to end', async () => {
    let ended = false;
    const job = new BackgroundJob(async (signal) => {
      while (!signal.aborted) await sleep(5);
      await sleep(20);
      ended = true;
    }, { atStart: true, everyMs: 1_000 }, () => undefined);
    job.start();
    await sleep(10);
    await job.stop();
    expect(ended).toBe(true);
  });

  it('reports a failed pass and runs again at the next tick', async () => {
    const errors: unknown[] = [];
    let passes = 0;
    const job = new BackgroundJob(async () => {
      passes += 1;
      if (passes === 1) throw new Error('database away');
    }, { atStart: true, everyMs: 15 }, (error) => errors.push(error));
    job.start();
    await until(() => passes >= 2);
    await job.stop();
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('database away');
  });
});
