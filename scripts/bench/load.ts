import autocannon from 'autocannon';

/** What one fixed-duration run measured. */
export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  non2xx: number;
  errors: number;
}

const percentile = (sorted: number[], p: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/**
 * Drives POST `path` with autocannon for `seconds` at `connections`; `body(i)` gives the i-th
 * request's JSON body. Latencies are recorded per response (autocannon's own summary has no p95).
 */
export async function drive(options: { url: string; path: string; token: string; connections: number; seconds: number; body: (i: number) => unknown }): Promise<LoadResult> {
  let counter = 0;
  const latencies: number[] = [];
  let done: (result: autocannon.Result) => void = () => undefined;
  let fail: (error: unknown) => void = () => undefined;
  const finished = new Promise<autocannon.Result>((resolve, reject) => {
    done = resolve;
    fail = reject;
  });
  const instance = autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: options.path,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${options.token}` },
        setupRequest: (request) => ({ ...request, body: JSON.stringify(options.body(counter++)) }),
      },
    ],
  }, (error, result) => (error ? fail(error) : done(result)));
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    latencies.push(responseTime);
  });
  const result = await finished;
  latencies.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    rps: round(latencies.length / options.seconds, 1),
    p50: round(percentile(latencies, 50)),
    p95: round(percentile(latencies, 95)),
    p99: round(percentile(latencies, 99)),
    max: round(latencies.at(-1) ?? 0),
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

/** Sum and count per stage of the discovery stage histogram, from a /metrics exposition. */
export function stageTotals(exposition: string): Map<string, { sum: number; count: number }> {
  const totals = new Map<string, { sum: number; count: number }>();
  const line = /^tool_registry_discovery_stage_seconds_(sum|count)\{([^}]*)\} ([0-9.e+-]+)$/gm;
  for (const match of exposition.matchAll(line)) {
    const stage = /stage="([^"]+)"/.exec(match[2]!)?.[1];
    if (!stage) continue;
    const entry = totals.get(stage) ?? { sum: 0, count: 0 };
    if (match[1] === 'sum') entry.sum += Number(match[3]);
    else entry.count += Number(match[3]);
    totals.set(stage, entry);
  }
  return totals;
}

/** Mean milliseconds per stage between two scrapes of /metrics. */
export function stageSplit(before: string, after: string): Record<string, number> {
  const a = stageTotals(before);
  const split: Record<string, number> = {};
  for (const [stage, b] of stageTotals(after)) {
    const prior = a.get(stage) ?? { sum: 0, count: 0 };
    const count = b.count - prior.count;
    if (count > 0) split[stage] = round(((b.sum - prior.sum) / count) * 1000, 3);
  }
  return split;
}
