import type { ToolDocument, ToolView } from './types.js';

/** JSON with object keys sorted at every level, so equal documents serialize equally. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

const extensionsOf = (value: object) => Object.fromEntries(Object.entries(value).filter(([key]) => key.startsWith('x-')));

/**
 * The document as the registry will store it, with the service's defaults applied (absent lists
 * empty, absent texts null, scopes deduplicated and sorted, sensitivity `low`, no side effects).
 * `summary` stays undefined when absent: the service derives it from the description.
 */
function normalized(doc: ToolDocument): Record<string, unknown> {
  return {
    name: doc.name,
    version: doc.version,
    description: doc.description.trim(),
    summary: doc.summary?.trim() || undefined,
    not_for: doc.not_for?.trim() || null,
    aliases: doc.aliases ?? [],
    examples: doc.examples ?? [],
    tags: doc.tags ?? [],
    category: doc.category ?? null,
    required_scopes: [...new Set(doc.required_scopes ?? [])].sort(),
    sensitivity: doc.sensitivity ?? 'low',
    side_effects: doc.side_effects ?? false,
    parameters: doc.parameters,
    returns: doc.returns ?? null,
    extensions: extensionsOf(doc),
  };
}

/**
 * The fields in which a local tool document differs from the stored tool; empty when a PUT
 * would be a no-op. Fields the service derives (an absent summary) are not compared.
 */
export function documentChanges(local: ToolDocument, remote: ToolView): string[] {
  const want = normalized(local);
  const have: Record<string, unknown> = { ...remote, extensions: extensionsOf(remote) };
  const changed: string[] = [];
  for (const [field, value] of Object.entries(want)) {
    if (value === undefined) continue;
    if (canonicalJson(value) !== canonicalJson(have[field] ?? null)) changed.push(field);
  }
  if (remote.status === 'retired') changed.push('status');
  return changed;
}
