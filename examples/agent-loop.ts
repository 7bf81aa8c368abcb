/**
 * An agent loop against the registry, with the model call replaced by a deterministic picker:
 *
 *   user request -> discover (shortlist + schemas) -> "model" picks a tool and fills arguments
 *   -> gateway authorize (re-checked against the stored tool) -> execute (a stub here)
 *
 * Run it against a service with the example catalog pushed:
 *   REGISTRY_URL=http://localhost:8080 REGISTRY_TOKEN=$(npm run -s token -- --tenant acme --scope "...") npx tsx examples/agent-loop.ts
 */
import { pathToFileURL } from 'node:url';

import { type AuthorizeResponse, type DiscoveredTool, RegistryClient } from '../clients/typescript/src/index.js';

/** What the stand-in model decided: which tool, with which arguments. */
export interface ToolCall {
  tool: string;
  version: string;
  arguments: Record<string, unknown>;
}

/** One turn of the loop, for printing and for tests. */
export interface Turn {
  request: string;
  shortlist: { name: string; score: number }[];
  tokens: { shortlist: number; catalog: number };
  call: ToolCall | undefined;
  decision: AuthorizeResponse | undefined;
  result: unknown;
}

type JsonSchema = { type?: string; enum?: unknown[]; minimum?: number; pattern?: string; default?: unknown; properties?: Record<string, JsonSchema>; required?: string[] };

/** Values a model would lift out of the request: ids such as INV-2024-0042, numbers, emails. */
function valueFor(name: string, schema: JsonSchema, request: string): unknown {
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.type === 'integer' || schema.type === 'number') return Number(/\b(\d+)\b/.exec(request)?.[1] ?? schema.minimum ?? 1);
  if (schema.type === 'boolean') return false;
  if (schema.type === 'array') return [];
  const id = /\b([A-Z]{2,5}-\d{4}-\d{3,})\b/.exec(request)?.[1];
  if (id && name.endsWith('_id')) return id;
  const email = /\b[\w.+-]+@[\w-]+\.[\w.]+\b/.exec(request)?.[0];
  if (email && name.includes('email')) return email;
  const word = /\b([a-z]+-[a-z-]+)\b/.exec(request)?.[1];
  if (word && (name === 'service' || name === 'job_id' || name === 'flag')) return word;
  return request.slice(0, 80);
}

/**
 * The deterministic stand-in for the model: takes the best-ranked tool and fills every required
 * parameter from the request. A real runtime sends the shortlist's schemas to the model instead.
 */
export function pickTool(request: string, shortlist: DiscoveredTool<'openai'>[]): ToolCall | undefined {
  const best = shortlist[0];
  if (!best) return undefined;
  const parameters = best.schema.function.parameters as JsonSchema;
  const args: Record<string, unknown> = {};
  for (const name of parameters.required ?? []) args[name] = valueFor(name, parameters.properties?.[name] ?? {}, request);
  return { tool: best.name, version: best.version, arguments: args };
}

/** The execution stub: a real gateway would call the tool's backend here. */
export async function execute(call: ToolCall): Promise<unknown> {
  return { ok: true, tool: call.tool, echo: call.arguments };
}

/** Runs one request through discover -> pick -> authorize -> execute. */
export async function runTurn(registry: RegistryClient, request: string, picker = pickTool): Promise<Turn> {
  const discovery = await registry.discover({ query: request, top_k: 3, format: 'openai' });
  const turn: Turn = {
    request,
    shortlist: discovery.tools.map((t) => ({ name: t.name, score: t.score })),
    tokens: discovery.tokens,
    call: picker(request, discovery.tools),
    decision: undefined,
    result: undefined,
  };
  if (!turn.call) return turn;
  // Discovery is not permission: the gateway re-checks the call against the stored tool.
  turn.decision = await registry.authorize({ tool: turn.call.tool, version: turn.call.version, arguments: turn.call.arguments, discovery_id: discovery.discovery_id });
  if (turn.decision.decision === 'allow') turn.result = await execute(turn.call);
  return turn;
}

export const SAMPLE_REQUESTS = [
  'Refund invoice INV-2024-0042, the blender arrived broken',
  'The nightly-export job is stuck, stop it',
  'Show me errors from checkout-api in the last 30 minutes',
  'Open a ticket for jane@globex.com: exports fail since Monday',
];

function print(turn: Turn): void {
  const log = (line: string) => process.stdout.write(`${line}\n`);
  log(`\n> ${turn.request}`);
  log(`  shortlist: ${turn.shortlist.map((t) => `${t.name} (${t.score.toFixed(2)})`).join(', ') || 'empty'}  [${turn.tokens.shortlist} of ${turn.tokens.catalog} catalog tokens]`);
  if (!turn.call) {
    log('  model: no suitable tool; answers in text');
    return;
  }
  log(`  model calls ${turn.call.tool}(${JSON.stringify(turn.call.arguments)})`);
  log(`  gateway: ${turn.decision?.decision}${turn.decision?.reasons.length ? ` - ${turn.decision.reasons.map((r) => `${r.code}: ${r.message}`).join('; ')}` : ''}`);
  if (turn.result !== undefined) log(`  result: ${JSON.stringify(turn.result)}`);
}

async function main(): Promise<void> {
  const registry = new RegistryClient({ baseUrl: process.env.REGISTRY_URL ?? 'http://localhost:8080', token: process.env.REGISTRY_TOKEN });
  const requests = process.argv.length > 2 ? process.argv.slice(2) : SAMPLE_REQUESTS;
  for (const request of requests) print(await runTurn(registry, request));

  // The gateway re-checks whatever the model produced: a hallucinated argument type is denied.
  const bad = await registry.authorize({ tool: 'issue_refund', arguments: { invoice_id: 'INV-2024-0042', reason: 'requested_by_customer', amount_cents: 'twenty dollars' } });
  process.stdout.write(`\n> (model hallucinates amount_cents: "twenty dollars")\n  gateway: ${bad.decision} - ${bad.reasons.map((r) => `${r.code} ${r.pointer ?? ''}: ${r.message}`).join('; ')}\n`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
