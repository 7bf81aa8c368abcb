import autocannon from 'autocannon';
import { SignJWT } from 'jose';

/** A bearer token the service (JWT_SECRET = `secret`) accepts for `tenant` with `scopes`, valid 6 h. */
export function benchToken(secret: string, subject: string, tenant: string, scopes: readonly string[]): Promise<string> {
  return new SignJWT({ tenant_id: tenant, scope: scopes.join(' ') })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(subject)
    .setIssuedAt()
    .setExpirationTime('6h')
    .sign(new TextEncoder().encode(secret));
}

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
