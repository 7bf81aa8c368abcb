import type { LoadResult } from './load.js';

/** The databases a leg runs on. */
export type Driver = 'embedded' | 'socket' | 'postgres';

export interface LegReport {
  driver: string;
  /** Which checkout served the leg ('before'/'after' with --baseline, else ''). */
  server: string;
  startupMs: number;
  serverPeakRssMiB: number;
  databasePeakRssMiB?: number;
  authorize: string;
  scenarios: { name: string; concurrency: number; result: LoadResult; stages?: Record<string, number> }[];
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
  serverPeakRssMiB: number;
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

const STAGES = ['auth', 'embedding', 'stats', 'retrieval', 'fusion', 'fetch', 'rendering', 'log', 'total'];

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
  out.push(`- started ${report.startedAt}, Node ${report.node}, ${report.cpus} CPUs, ${report.seconds} s per load run, loopback, ${report.catalog} catalog`);
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
      out.push('| service | database | registration tools/s | registration s | every vector after s | how | failed | server peak RSS MiB |', '|---|---|---|---|---|---|---|---|');
      for (const r of size.registrations) {
        out.push(`| ${r.server || '-'} | ${r.database} | ${r.toolsPerSecond} | ${r.seconds} | ${r.indexingSeconds} | ${r.indexedBy} | ${r.failed} | ${r.serverPeakRssMiB} |`);
      }
      out.push('');
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
    out.push('Mean milliseconds per discovery stage (service metrics):', '');
    out.push(`| database | scenario | c | ${STAGES.join(' | ')} |`, `|---|---|---|${STAGES.map(() => '---').join('|')}|`);
    for (const leg of size.legs) {
      for (const s of leg.scenarios) {
        if (!s.stages) continue;
        out.push(`| ${leg.driver} | ${s.name} | ${s.concurrency} | ${STAGES.map((st) => s.stages?.[st] ?? '-').join(' | ')} |`);
      }
    }
    out.push('');
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
