import { describe, expect, it } from 'vitest';

import { runSoak, soakProblems } from '../../scripts/soak.js';

/**
 * The soak's short form (the 5-minute form is `npm run soak`): ~20 s of mixed register, update,
 * discover and authorize on loopback, in-process PGlite. No error responses; heap growth after the
 * warm-up, measured after a full GC, within 64 MiB (as `npm run soak`); a fixed query set ranks
 * identically before and after.
 */
describe('soak (short form)', () => {
  it('serves a mixed load without errors, bounded memory and stable rankings', async () => {
    const report = await runSoak({ durationMs: 20_000, concurrency: 4, heapBoundBytes: 64 * 2 ** 20 });
    expect(soakProblems(report)).toEqual([]);
    expect(report.requests).toBeGreaterThan(100);
    expect(Object.keys(report.byKind).sort()).toEqual(['authorize', 'discover', 'register', 'update']);
  }, 90_000);
});
