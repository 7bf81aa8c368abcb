/**
 * Where a discover request's time goes, read from two scrapes of the service's /metrics around a
 * load run: the histogram `tool_registry_discovery_stage_seconds{stage,search_mode}`. Stages are
 * whatever labels the service reports (a newer service may split a stage, e.g. `lexical` and
 * `vector`), so nothing here names them.
 */

const METRIC = 'tool_registry_discovery_stage_seconds';

/** One stage's histogram, summed over search modes: sum (s), count, cumulative counts per bucket bound (s). */
interface StageHistogram {
  sum: number;
  count: number;
  buckets: Map<number, number>;
}

/** Counters of one scrape: per stage, and the `total` stage's count per search mode. */
export interface StageTotals {
  stages: Map<string, StageHistogram>;
  modes: Map<string, number>;
}

/** Per stage over a load run: mean ms, approximate p50 ms from the buckets, requests per search mode. */
export interface StageSplit {
  mean: Record<string, number>;
  p50: Record<string, number>;
  modes: Record<string, number>;
}

const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

/** `a="x",b="y"` as a map (label values hold no quotes in this metric). */
function labels(text: string): Map<string, string> {
  return new Map([...text.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

/** The stage histogram's counters in a Prometheus text exposition. */
export function stageTotals(exposition: string): StageTotals {
  const stages = new Map<string, StageHistogram>();
  const modes = new Map<string, number>();
  const line = new RegExp(`^${METRIC}_(sum|count|bucket)\\{([^}]*)\\} ([0-9.eE+-]+|\\+Inf|NaN)$`, 'gm');
  for (const match of exposition.matchAll(line)) {
    const tags = labels(match[2]!);
    const stage = tags.get('stage');
    if (!stage) continue;
    const value = Number(match[3]);
    const entry = stages.get(stage) ?? { sum: 0, count: 0, buckets: new Map<number, number>() };
    stages.set(stage, entry);
    if (match[1] === 'sum') entry.sum += value;
    else if (match[1] === 'count') {
      entry.count += value;
      if (stage === 'total') {
        const mode = tags.get('search_mode') ?? '';
        modes.set(mode, (modes.get(mode) ?? 0) + value);
      }
    } else {
      const le = tags.get('le') === '+Inf' ? Number.POSITIVE_INFINITY : Number(tags.get('le'));
      entry.buckets.set(le, (entry.buckets.get(le) ?? 0) + value);
    }
  }
  return { stages, modes };
}

/**
 * The median from cumulative bucket counts, interpolated linearly inside its bucket (as
 * Prometheus' histogram_quantile does): exact only to the bucket, so an approximation. A median in
 * the +Inf bucket is reported as the largest finite bound.
 */
export function bucketMedian(buckets: Map<number, number>, count: number): number | undefined {
  if (count <= 0) return undefined;
  const bounds = [...buckets.keys()].sort((a, b) => a - b);
  const rank = count / 2;
  let lower = 0;
  let below = 0;
  for (const bound of bounds) {
    const cumulative = buckets.get(bound)!;
    if (cumulative >= rank) {
      if (!Number.isFinite(bound)) return lower;
      const inside = cumulative - below;
      return inside > 0 ? lower + ((bound - lower) * (rank - below)) / inside : bound;
    }
    lower = bound;
    below = cumulative;
  }
  return lower;
}

/** Per-stage mean and approximate p50 (ms) of the requests served between two scrapes of /metrics. */
export function stageSplit(before: string, after: string): StageSplit {
  const a = stageTotals(before);
  const b = stageTotals(after);
  const split: StageSplit = { mean: {}, p50: {}, modes: {} };
  for (const [stage, now] of b.stages) {
    const prior = a.stages.get(stage);
    const count = now.count - (prior?.count ?? 0);
    if (count <= 0) continue;
    split.mean[stage] = round(((now.sum - (prior?.sum ?? 0)) / count) * 1000);
    const delta = new Map([...now.buckets].map(([le, n]) => [le, n - (prior?.buckets.get(le) ?? 0)]));
    const median = bucketMedian(delta, count);
    if (median !== undefined) split.p50[stage] = round(median * 1000, 2);
  }
  for (const [mode, n] of b.modes) {
    const delta = n - (a.modes.get(mode) ?? 0);
    if (delta > 0) split.modes[mode || '-'] = delta;
  }
  return split;
}
