import type { LoadResult } from './load.js';

export interface LegReport {
  driver: string;
  startupMs: number;
  serverPeakRssMiB: number;
  databasePeakRssMiB?: number;
  authorize: string;
  scenarios: { name: string; concurrency: number; result: LoadResult; stages?: Record<string, number> }[];
}

export interface SizeReport {
  size: number;
  tenants: number;
  totalTools: number;
  visibleTools: number;
  registration?: { tools: number; failed: number; seconds: number; toolsPerSecond: number };
  indexingSeconds?: number;
  catalogBytes?: number;
  catalogTokens?: number;
  shortlistBytes?: number;
  shortlistTokens?: number;
  keywordP50?: number;
  keywordP95?: number;
  legs: LegReport[];
}

export interface BenchReport {
  label: string;
  commandLine: string;
  startedAt: string;
  node: string;
  cpus: number;
  seconds: number;
  embedder: string;
  localModel?: { p50: number; p95: number };
  sizes: SizeReport[];
}

const STAGES = ['auth', 'embedding', 'stats', 'retrieval', 'fusion', 'fetch', 'rendering', 'log', 'total'];

/** The report as markdown: one latency table per size and database, then the baselines. */
export function markdownReport(report: BenchReport): string {
  const out: string[] = [];
  out.push(`# Benchmark ${report.label}`.trim(), '');
  out.push(`- command: \`${report.commandLine}\``);
  out.push(`- started ${report.startedAt}, Node ${report.node}, ${report.cpus} CPUs, ${report.seconds} s per load run, loopback`);
  out.push(`- tool embeddings and new request texts: ${report.embedder}`);
  if (report.localModel) out.push(`- local model (use-lite-512) query embedding, in-process: p50 ${report.localModel.p50} ms, p95 ${report.localModel.p95} ms`);
  out.push('');
  for (const size of report.sizes) {
    out.push(`## ${size.size.toLocaleString('en')} tools in the caller's tenant`, '');
    out.push(`${size.totalTools.toLocaleString('en')} tools over ${size.tenants} tenants; the caller sees ${size.visibleTools.toLocaleString('en')}.`);
    if (size.registration) {
      out.push(
        `Registration through POST /v1/tools (8 concurrent): ${size.registration.toolsPerSecond} tools/s (${size.registration.seconds} s, ${size.registration.failed} failed); all vectors written after ${size.indexingSeconds} s.`,
      );
    }
    out.push('');
    out.push('| database | scenario | c | req/s | p50 ms | p95 ms | p99 ms | max ms | non-2xx |', '|---|---|---|---|---|---|---|---|---|');
    for (const leg of size.legs) {
      for (const s of leg.scenarios) {
        const r = s.result;
        out.push(`| ${leg.driver} | ${s.name} | ${s.concurrency} | ${r.rps} | ${r.p50} | ${r.p95} | ${r.p99} | ${r.max} | ${r.non2xx + r.errors} |`);
      }
    }
    out.push('');
    out.push('| database | start-up ms | server peak RSS MiB | database process peak RSS MiB | authorize |', '|---|---|---|---|---|');
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
