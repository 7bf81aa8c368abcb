import { describe, expect, it } from 'vitest';

import { LagClock, parseLsn } from '../../src/db/replica-lag.js';

describe('parseLsn', () => {
  it('reads pg_lsn text as a byte offset', () => {
    expect(parseLsn('0/0')).toBe(0n);
    expect(parseLsn('0/3000190')).toBe(0x3000190n);
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) | 0xb374d848n);
    expect(parseLsn('16/B374D848') > parseLsn('15/FFFFFFFF')).toBe(true);
  });

  it('refuses anything else', () => {
    expect(() => parseLsn('16-B374D848')).toThrow(/not a WAL position/);
    expect(() => parseLsn('')).toThrow(/not a WAL position/);
  });
});

describe('LagClock', () => {
  it('is unknown before the first sample', () => {
    expect(new LagClock(10_000).lag(5n, 1_000)).toBeUndefined();
  });

  it('says 0 for a replica holding everything the primary had at the last sample', () => {
    const clock = new LagClock(10_000);
    clock.record(1_000, 100n);
    clock.record(2_000, 200n);
    expect(clock.lag(200n, 2_050)).toBe(0);
    expect(clock.lag(250n, 2_050)).toBe(0);
  });

  it('measures from the newest sample the replica has replayed (an upper bound)', () => {
    const clock = new LagClock(10_000);
    clock.record(1_000, 100n);
    clock.record(2_000, 200n);
    clock.record(3_000, 300n);
    expect(clock.lag(299n, 3_010)).toBe(1_010);
    expect(clock.lag(150n, 3_010)).toBe(2_010);
  });

  it('keeps an idle primary from looking like lag (no new WAL, nothing missing)', () => {
    const clock = new LagClock(10_000);
    for (let at = 0; at <= 60_000; at += 1_000) clock.record(at, 500n);
    expect(clock.lag(500n, 60_000)).toBe(0);
  });

  it('keeps one sample older than its window, so a long lag still reads as long', () => {
    const clock = new LagClock(3_000);
    for (let at = 0; at <= 20_000; at += 1_000) clock.record(at, BigInt(at));
    // The replica stopped at the start: the oldest sample kept is just beyond the 3 s window.
    expect(clock.lag(0n, 20_000)).toBeGreaterThanOrEqual(3_000);
  });
});
