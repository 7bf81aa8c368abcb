/**
 * Deterministic synthetic catalogs for the benchmark: realistic tool names, cards, schemas and
 * scopes across tenants, and request texts, all from one seeded PRNG (same seed, same catalog).
 */

/** mulberry32: small, fast, good enough for synthetic data. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const pick = <T>(rand: Rand, items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
const pickSome = <T>(rand: Rand, items: readonly T[], n: number): T[] => {
  const pool = [...items];
  const out: T[] = [];
  while (out.length < n && pool.length > 0) out.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]!);
  return out;
};

/** Business domains: the first segment of a tool name, its category and its scope prefix. */
export const DOMAINS = [
  'billing', 'crm', 'support', 'shipping', 'hr', 'devops', 'analytics', 'calendar', 'email', 'storage',
  'security', 'inventory', 'marketing', 'payments', 'docs', 'search', 'ml', 'iot', 'finance', 'legal',
] as const;

const OBJECTS: Record<(typeof DOMAINS)[number], string[]> = {
  billing: ['invoice', 'refund', 'credit_note', 'subscription', 'payment_method', 'tax_rate', 'coupon', 'statement'],
  crm: ['contact', 'lead', 'opportunity', 'account', 'deal_stage', 'note', 'segment', 'pipeline'],
  support: ['ticket', 'macro', 'sla_policy', 'customer_reply', 'escalation', 'satisfaction_survey', 'queue', 'article'],
  shipping: ['shipment', 'parcel', 'label', 'carrier_rate', 'pickup', 'customs_form', 'return_label', 'tracking_event'],
  hr: ['employee', 'leave_request', 'payslip', 'job_posting', 'candidate', 'review_cycle', 'benefit_plan', 'timesheet'],
  devops: ['deployment', 'batch_job', 'build', 'incident', 'alert_rule', 'feature_flag', 'container', 'rollback'],
  analytics: ['dashboard', 'report', 'metric', 'funnel', 'cohort', 'export_job', 'event_stream', 'forecast'],
  calendar: ['meeting', 'event', 'availability', 'room_booking', 'reminder', 'recurring_series', 'invite', 'time_slot'],
  email: ['message', 'draft', 'mailing_list', 'template', 'attachment', 'thread', 'bounce', 'signature'],
  storage: ['file', 'folder', 'bucket', 'share_link', 'snapshot', 'object_version', 'quota', 'archive'],
  security: ['api_key', 'access_policy', 'audit_event', 'session', 'mfa_device', 'secret', 'vulnerability', 'role'],
  inventory: ['stock_level', 'sku', 'warehouse', 'purchase_order', 'supplier', 'reorder_rule', 'bin_location', 'cycle_count'],
  marketing: ['campaign', 'audience', 'landing_page', 'ab_test', 'newsletter', 'promo_code', 'ad_budget', 'utm_link'],
  payments: ['charge', 'payout', 'dispute', 'transfer', 'card', 'bank_account', 'payment_intent', 'fee'],
  docs: ['document', 'page', 'comment', 'revision', 'template', 'signature_request', 'space', 'glossary_term'],
  search: ['index', 'query_rule', 'synonym', 'ranking_profile', 'crawler', 'suggestion', 'facet', 'document_batch'],
  ml: ['model', 'training_run', 'dataset', 'prediction', 'feature_set', 'experiment', 'endpoint', 'label_task'],
  iot: ['device', 'sensor_reading', 'firmware', 'gateway', 'telemetry_rule', 'fleet', 'shadow_state', 'alarm'],
  finance: ['ledger_entry', 'budget', 'expense', 'journal', 'exchange_rate', 'cost_center', 'reconciliation', 'forecast'],
  legal: ['contract', 'clause', 'nda', 'matter', 'consent_record', 'policy_document', 'e_signature', 'retention_hold'],
};

const VERBS = [
  { verb: 'get', phrase: 'Fetch', words: ['show', 'look up', 'find'], effects: false },
  { verb: 'list', phrase: 'List', words: ['list all', 'show me every', 'browse'], effects: false },
  { verb: 'search', phrase: 'Search', words: ['search for', 'find any', 'query'], effects: false },
  { verb: 'create', phrase: 'Create', words: ['create', 'add a new', 'set up'], effects: true },
  { verb: 'update', phrase: 'Update', words: ['change', 'edit', 'modify'], effects: true },
  { verb: 'delete', phrase: 'Delete', words: ['delete', 'remove', 'get rid of'], effects: true },
  { verb: 'cancel', phrase: 'Cancel', words: ['cancel', 'stop', 'call off'], effects: true },
  { verb: 'approve', phrase: 'Approve', words: ['approve', 'sign off on', 'accept'], effects: true },
  { verb: 'export', phrase: 'Export', words: ['export', 'download', 'dump'], effects: false },
  { verb: 'archive', phrase: 'Archive', words: ['archive', 'put away', 'shelve'], effects: true },
  { verb: 'restore', phrase: 'Restore', words: ['restore', 'bring back', 'undo the removal of'], effects: true },
  { verb: 'assign', phrase: 'Assign', words: ['assign', 'hand over', 'give ownership of'], effects: true },
  { verb: 'summarize', phrase: 'Summarize', words: ['summarize', 'give me an overview of', 'recap'], effects: false },
  { verb: 'validate', phrase: 'Validate', words: ['validate', 'check', 'verify'], effects: false },
  { verb: 'sync', phrase: 'Synchronize', words: ['sync', 'refresh', 'pull the latest'], effects: true },
  { verb: 'issue', phrase: 'Issue', words: ['issue', 'send out', 'generate'], effects: true },
] as const;

const QUALIFIERS = ['bulk', 'by_id', 'v2', 'eu', 'us', 'async', 'draft', 'legacy', 'batch', 'preview', 'internal', 'partner'];
const ADJECTIVES = ['pending', 'overdue', 'recent', 'failed', 'archived', 'shared', 'priority', 'open', 'closed', 'flagged'];
const TAILS = [
  'Returns the stored record with its current status.',
  'Respects the tenant retention policy and writes an audit entry.',
  'Works on one item or a batch of up to 100 items.',
  'Fails when the item is locked by another process.',
  'The caller must own the item or hold the admin role.',
  'Times out after 30 seconds; safe to retry with the same idempotency key.',
];
const PEOPLE = ['Alice', 'Bob', 'Chen', 'Dana', 'Emeka', 'Farah', 'Goran', 'Hana', 'Ivan', 'Julia'];
const PARAM_KINDS = [
  { suffix: 'id', type: 'string', text: 'identifier of the' },
  { suffix: 'status', type: 'string', enum: ['open', 'pending', 'closed'], text: 'status filter for the' },
  { suffix: 'limit', type: 'integer', text: 'maximum number of results for the' },
  { suffix: 'amount', type: 'number', text: 'amount in the account currency for the' },
  { suffix: 'note', type: 'string', text: 'free-text note stored with the' },
  { suffix: 'notify', type: 'boolean', text: 'whether to notify the owner of the' },
  { suffix: 'since', type: 'string', format: 'date-time', text: 'only items changed after this time, for the' },
] as const;

const words = (identifier: string) => identifier.replace(/_/g, ' ');

/** A publishable tool document (the shape POST /v1/tools takes). */
export interface BenchTool {
  name: string;
  version: string;
  description: string;
  /** Optional in real-shaped catalogs, as in most published tool definitions. */
  summary?: string;
  not_for?: string;
  aliases: string[];
  examples: string[];
  tags: string[];
  category: string;
  required_scopes: string[];
  sensitivity: 'low' | 'medium' | 'high';
  side_effects: boolean;
  parameters: { type: 'object'; properties: Record<string, Record<string, unknown>>; required: string[]; additionalProperties: false };
}

/** One tenant's tools, `count` of them, deterministic for (seed, tenantIndex). */
export function generateTools(seed: number, tenantIndex: number, count: number): BenchTool[] {
  const rand = prng(seed * 1_000_003 + tenantIndex);
  const seen = new Set<string>();
  const tools: BenchTool[] = [];
  while (tools.length < count) {
    const domain = pick(rand, DOMAINS);
    const object = pick(rand, OBJECTS[domain]);
    const v = pick(rand, VERBS);
    let name = `${domain}.${v.verb}_${object}`;
    for (let n = 0; seen.has(name); n += 1) name = `${domain}.${v.verb}_${object}_${QUALIFIERS[n % QUALIFIERS.length]}${n >= QUALIFIERS.length ? Math.floor(n / QUALIFIERS.length) : ''}`;
    seen.add(name);
    const thing = words(object);
    const adjective = pick(rand, ADJECTIVES);
    const paramKinds = pickSome(rand, PARAM_KINDS, 1 + Math.floor(rand() * 5));
    const properties: Record<string, Record<string, unknown>> = {};
    for (const kind of paramKinds) {
      const key = kind.suffix === 'id' ? `${object}_id` : kind.suffix;
      properties[key] = {
        type: kind.type,
        description: `The ${kind.text} ${thing}.`,
        ...('enum' in kind ? { enum: kind.enum } : {}),
        ...('format' in kind ? { format: kind.format } : {}),
      };
    }
    const keys = Object.keys(properties);
    const required = keys.filter((_, i) => i === 0 || rand() < 0.3);
    const sensitivity = v.effects ? (rand() < 0.3 ? 'high' : 'medium') : 'low';
    const scopes = sensitivity === 'high' || rand() < 0.6 ? [`${domain}:${v.effects ? 'write' : 'read'}`] : [];
    const aliases = pickSome(rand, v.words, 1 + Math.floor(rand() * 3)).map((w) => `${w} ${rand() < 0.5 ? 'the ' : ''}${adjective} ${thing}`);
    const examples = rand() < 0.6 ? [`${pick(rand, v.words)} the ${thing} for ${pick(rand, PEOPLE)}, it is ${adjective}`] : [];
    tools.push({
      name,
      version: '1.0.0',
      description: `${v.phrase} ${adjective} ${thing} records in the ${domain} system. ${pick(rand, TAILS)}`,
      summary: `${v.phrase} a ${thing}.`,
      not_for: `Not for ${thing} templates; use ${domain}.list_${object} to browse.`,
      aliases,
      examples,
      tags: [domain, v.effects ? 'write' : 'read'],
      category: domain,
      required_scopes: sensitivity === 'high' && scopes.length === 0 ? [`${domain}:write`] : scopes,
      sensitivity,
      side_effects: v.effects,
      parameters: { type: 'object', properties, required, additionalProperties: false },
    });
  }
  return tools;
}

/** Scopes of the benchmark caller: read and write on 16 of the 20 domains (most, not all, tools visible). */
export function callerScopes(): string[] {
  return DOMAINS.slice(0, 16).flatMap((d) => [`${d}:read`, `${d}:write`]);
}

/** Whether a caller holding `scopes` may see `tool` (mirrors the service's predicate, for baselines). */
export const visible = (tool: BenchTool, scopes: ReadonlySet<string>): boolean => tool.required_scopes.every((s) => scopes.has(s));

/** The i-th request text of a stream: distinct for every i (embedding cache misses). */
export function requestText(seed: number, i: number): string {
  const rand = prng(seed * 7919 + i);
  const domain = pick(rand, DOMAINS);
  const object = pick(rand, OBJECTS[domain]);
  const v = pick(rand, VERBS);
  const style = Math.floor(rand() * 3);
  const ref = `#${1000 + i}`;
  if (style === 0) return `${pick(rand, v.words)} the ${pick(rand, ADJECTIVES)} ${words(object)} ${ref} for ${pick(rand, PEOPLE)}`;
  if (style === 1) return `can you ${pick(rand, v.words)} ${words(object)} ${ref} in ${domain}?`;
  return `${domain}.${v.verb}_${object} ${ref}`;
}

/** Arguments that satisfy a tool's generated schema (for /v1/authorize). */
export function validArguments(tool: BenchTool): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const key of tool.parameters.required) {
    const type = tool.parameters.properties[key]!.type;
    const format = tool.parameters.properties[key]!.format;
    const enumValues = tool.parameters.properties[key]!.enum as string[] | undefined;
    args[key] = enumValues ? enumValues[0] : type === 'integer' ? 10 : type === 'number' ? 12.5 : type === 'boolean' ? true : format ? '2026-01-01T00:00:00Z' : 'x-123';
  }
  return args;
}
