import type { LoadResult } from './load.js';

/** The databases a leg runs on. */
export type Driver = 'embedded' | 'socket' | 'postgres';

/** One load run and, for discover, where its requests' time went (service metrics, ms). */
export interface Scenario {
  name: string;
  concurrency: number;
  result: LoadResult;
  /** Mean ms per stage (delta sum / delta count between two scrapes of /metrics). */
  stages?: Record<string, number>;
  /** Approximate p50 ms per stage, interpolated inside the histogram's buckets. */
  stageP50?: Record<string, number>;
  /** Requests per search mode (hybrid, lexical, ...), from the `total` stage's count. */
  searchModes?: Record<string, number>;
}

/** The discover load run right after registration, while the service was still storing vectors. */
export interface DuringIndexing extends Scenario {
  /** Tools still without a vector when the load started and when it ended (when the bench could tell). */
  pendingAtStart?: number;
  pendingAtEnd?: number;
  /** How pending was counted. */
  pendingFrom?: string;
}

export interface LegReport {
  driver: string;
  /** Which checkout served the leg ('before'/'after' with --baseline, else ''). */
  server: string;
  startupMs: number;
  serverPeakRssMiB: number;
  databasePeakRssMiB?: number;
  authorize: string;
  scenarios: Scenario[];
}

/** Registration of the whole catalog with one server on one database, until every vector existed. */
export interface Registration {
  server: string;
  database: string;
  tools: number;
  failed: number;
  seconds: number;
  toolsPerSecond: number;
  indexingSeconds: number;
  indexedBy: string;
  /** EMBEDDING_LOCAL_THREADS given to the service (--index-threads), or 'service default'; '-' when the loopback embedder indexed. */
  indexThreads: string;
  serverPeakRssMiB: number;
  duringIndexing?: DuringIndexing;
}

export interface SizeReport {
  size: number;
  tenants: number;
  totalTools: number;
  visibleTools: number;
  registrations: Registration[];
  catalogBytes?: number;
  catalogTokens?: number;
  shortlistBytes?: number;
  shortlistTokens?: number;
  keywordP50?: number;
  keywordP95?: number;
  legs: LegReport[];
  /** Database families whose run failed, with the reason. */
  failures: string[];
}

export interface BenchReport {
  label: string;
  commandLine: string;
  startedAt: string;
  node: string;
  cpus: number;
  seconds: number;
  catalog: string;
  servers: string[];
  embedder: string;
  localModel?: { p50: number; p95: number; textsPerSecond: number; texts: number; meanChars: number };
  sizes: SizeReport[];
}

/** The order stages are shown in when present; any other label the service reports goes before `total`. */
const STAGE_ORDER = ['auth', 'cache', 'embedding', 'stats', 'lexical', 'vector', 'retrieval', 'fusion', 'fetch', 'rendering', 'log'];

/** Every stage label that appears in these scenarios, in display order. */
export function stageColumns(scenarios: Scenario[]): string[] {
  const seen = new Set(scenarios.flatMap((s) => Object.keys(s.stages ?? {})));
  const known = STAGE_ORDER.filter((st) => seen.has(st));
  const other = [...seen].filter((st) => st !== 'total' && !STAGE_ORDER.includes(st));
  return [...known, ...other, ...(seen.has('total') ? ['total'] : [])];
}

/** A stage cell: mean / approximate p50. */
function stageCell(s: Scenario, stage: string): string {
  const mean = s.stages?.[stage];
  if (mean === undefined) return '-';
  const p50 = s.stageP50?.[stage];
  return p50 === undefined ? String(mean) : `${mean} / ~${p50}`;
}

const modesText = (s: Scenario) => Object.entries(s.searchModes ?? {}).map(([mode, n]) => `${mode} ${n}`).join(', ') || '-';

/** One target of the issue (2 cores, 10,000 tools in the caller's tenant), checked per leg. */
interface Target {
  what: string;
  /** Which legs it applies to (matched against the leg's driver label). */
  driver: RegExp;
  scenario: string;
  concurrency: number;
  metric: 'p50' | 'p99' | 'rps';
  limit: number;
}

const NATIVE = /native PostgreSQL/;
const EMBEDDED = /embedded PGlite/;
const TARGETS: Target[] = [
  { what: 'discover cached c=1 p50 <= 5 ms', driver: NATIVE, scenario: 'discover cached', concurrency: 1, metric: 'p50', limit: 5 },
  { what: 'discover cached c=1 p99 <= 20 ms', driver: NATIVE, scenario: 'discover cached', concurrency: 1, metric: 'p99', limit: 20 },
  { what: 'discover new query c=1 p50 <= 20 ms', driver: NATIVE, scenario: 'discover new', concurrency: 1, metric: 'p50', limit: 20 },
  { what: 'discover c=32 >= 400 req/s', driver: NATIVE, scenario: 'discover cached', concurrency: 32, metric: 'rps', limit: 400 },
  { what: 'authorize c=1 p50 <= 2 ms', driver: NATIVE, scenario: 'authorize', concurrency: 1, metric: 'p50', limit: 2 },
  { what: 'authorize c=32 >= 1,500 req/s', driver: NATIVE, scenario: 'authorize', concurrency: 32, metric: 'rps', limit: 1500 },
  { what: 'discover cached c=1 p50 <= 15 ms', driver: EMBEDDED, scenario: 'discover cached', concurrency: 1, metric: 'p50', limit: 15 },
  { what: 'discover c=32 >= 100 req/s', driver: EMBEDDED, scenario: 'discover cached', concurrency: 32, metric: 'rps', limit: 100 },
  { what: 'authorize c=32 >= 600 req/s', driver: EMBEDDED, scenario: 'authorize', concurrency: 32, metric: 'rps', limit: 600 },
];

function targetRows(size: SizeReport, seconds: number): string[] {
  const rows: string[] = [];
  for (const leg of size.legs) {
    for (const t of TARGETS) {
      if (!t.driver.test(leg.driver)) continue;
      const s = leg.scenarios.find((x) => x.name === t.scenario && x.concurrency === t.concurrency);
      if (!s) continue;
      // No response inside the run: the latency is beyond the run's length, not zero.
      if (s.result.requests === 0) {
        rows.push(`| ${leg.driver} | ${t.what} | no response within the ${seconds} s run | **missed** |`);
        continue;
      }
      const value = s.result[t.metric];
      const met = t.metric === 'rps' ? value >= t.limit : value <= t.limit;
      rows.push(`| ${leg.driver} | ${t.what} | ${value}${t.metric === 'rps' ? ' req/s' : ' ms'} | ${met ? 'met' : '**missed**'} |`);
    }
    const errors = leg.scenarios.reduce((n, s) => n + s.result.non2xx + s.result.errors, 0);
    rows.push(`| ${leg.driver} | no errors under load | ${errors} | ${errors === 0 ? 'met' : '**missed**'} |`);
  }
  return rows;
}

/** The report as markdown: registration, one latency table per size, stages, targets, baselines. */
export function markdownReport(report: BenchReport): string {
  const out: string[] = [];
  out.push(`# Benchmark ${report.label}`.trim(), '');
  out.push(`- command: \`${report.commandLine}\``);
  out.push(`- started ${report.startedAt}, Node ${report.node}, ${report.cpus} CPUs, ${report.seconds} s per load run, loopback network, ${report.catalog} catalog`);
  out.push(`- services: ${report.servers.join('; ')}`);
  out.push(`- tool embeddings and new request texts: ${report.embedder}`);
  if (report.localModel) {
    const m = report.localModel;
    out.push(`- local encoder (use-lite-512) in the bench process: one request text p50 ${m.p50} ms, p95 ${m.p95} ms; ${m.textsPerSecond} card texts/s in batches of 64 (${m.texts} texts, mean ${m.meanChars} chars)`);
  }
  out.push('');
  for (const size of report.sizes) {
    out.push(`## ${size.size.toLocaleString('en')} tools in the caller's tenant`, '');
    out.push(`${size.totalTools.toLocaleString('en')} tools over ${size.tenants} tenants; the caller sees ${size.visibleTools.toLocaleString('en')}.`, '');
    for (const failure of size.failures) out.push(`- **FAILED** ${failure}`);
    if (size.failures.length > 0) out.push('');
    if (size.registrations.length > 0) {
      out.push('| service | database | registration tools/s | registration s | every vector after s | encoder threads | how | failed | server peak RSS MiB |', '|---|---|---|---|---|---|---|---|---|');
      for (const r of size.registrations) {
        out.push(`| ${r.server || '-'} | ${r.database} | ${r.toolsPerSecond} | ${r.seconds} | ${r.indexingSeconds} | ${r.indexThreads} | ${r.indexedBy} | ${r.failed} | ${r.serverPeakRssMiB} |`);
      }
      out.push('');
      const during = size.registrations.filter((r) => r.duringIndexing);
      if (during.length > 0) {
        out.push('Discover during indexing (new requests, c=1, started right after the last registration; tools without a vector at its start and end):', '');
        out.push('| service | database | requests | req/s | p50 ms | p99 ms | max ms | errors | search modes | pending start -> end |', '|---|---|---|---|---|---|---|---|---|---|');
        for (const r of during) {
          const d = r.duringIndexing!;
          const pending = d.pendingAtStart === undefined ? '-' : `${d.pendingAtStart} -> ${d.pendingAtEnd ?? '?'} (${d.pendingFrom})`;
          out.push(`| ${r.server || '-'} | ${r.database} | ${d.result.requests} | ${d.result.rps} | ${d.result.p50} | ${d.result.p99} | ${d.result.max} | ${d.result.non2xx + d.result.errors} | ${modesText(d)} | ${pending} |`);
        }
        out.push('');
      }
    }
    out.push('| database | scenario | c | req/s | p50 ms | p95 ms | p99 ms | max ms | errors |', '|---|---|---|---|---|---|---|---|---|');
    for (const leg of size.legs) {
      for (const s of leg.scenarios) {
        const r = s.result;
        const latency = r.requests === 0 ? `no response within ${report.seconds} s | - | - | -` : `${r.p50} | ${r.p95} | ${r.p99} | ${r.max}`;
        out.push(`| ${leg.driver} | ${s.name} | ${s.concurrency} | ${r.rps} | ${latency} | ${r.non2xx + r.errors} |`);
      }
    }
    out.push('');
    out.push('| database | start-up ms | server peak RSS MiB | database process peak RSS MiB | authorize probe |', '|---|---|---|---|---|');
    for (const leg of size.legs) out.push(`| ${leg.driver} | ${leg.startupMs} | ${leg.serverPeakRssMiB} | ${leg.databasePeakRssMiB ?? '-'} | ${leg.authorize} |`);
    out.push('');
    // Where the time goes: every leg's discover runs, and the runs during indexing.
    const staged = [
      ...size.registrations.filter((r) => r.duringIndexing?.stages).map((r) => ({ driver: `${r.server ? `${r.server}: ` : ''}${r.database}`, s: r.duringIndexing! as Scenario })),
      ...size.legs.flatMap((leg) => leg.scenarios.filter((s) => s.stages).map((s) => ({ driver: leg.driver, s }))),
    ];
    const columns = stageColumns(staged.map((x) => x.s));
    if (staged.length > 0) {
      out.push('Milliseconds per discovery stage, mean / ~p50 (service metrics between two scrapes; p50 interpolated inside the histogram buckets, so approximate):', '');
      out.push(`| database | scenario | c | ${columns.join(' | ')} | search modes |`, `|---|---|---|${columns.map(() => '---').join('|')}|---|`);
      for (const { driver, s } of staged) out.push(`| ${driver} | ${s.name} | ${s.concurrency} | ${columns.map((st) => stageCell(s, st)).join(' | ')} | ${modesText(s)} |`);
      out.push('');
    }
    const targets = targetRows(size, report.seconds);
    if (targets.length > 0) {
      out.push(`Targets (set for 10,000 tools on 2 cores${size.size === 10_000 ? '' : `; this size is ${size.size.toLocaleString('en')}`}):`, '');
      out.push('| database | target | measured | |', '|---|---|---|---|', ...targets, '');
    }
    if (size.catalogBytes !== undefined) {
      out.push('Baselines:', '');
      out.push(`- every authorized schema each turn (openai format): ${size.catalogTokens?.toLocaleString('en')} tokens, ${size.catalogBytes.toLocaleString('en')} bytes per turn`);
      out.push(`- discover top-3 shortlist: ${size.shortlistTokens} tokens, ${size.shortlistBytes?.toLocaleString('en')} bytes per turn (${((size.catalogTokens ?? 0) / Math.max(1, size.shortlistTokens ?? 1)).toFixed(0)}x fewer tokens)`);
      out.push(`- naive in-process keyword loop over the caller's ${size.visibleTools.toLocaleString('en')} tools: p50 ${size.keywordP50} ms, p95 ${size.keywordP95} ms per query`);
      out.push('');
    }
  }
  return `${out.join('\n')}\n`;
}
