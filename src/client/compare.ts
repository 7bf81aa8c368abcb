import { canonicalJson } from '../tools/canonical-json.js';
import { normalizeDocument } from '../tools/normalize.js';
import type { ToolDocument, ToolView } from './types.js';

const extensionsOf = (value: object) => Object.fromEntries(Object.entries(value).filter(([key]) => key.startsWith('x-')));


/**
 * The fields in which a local tool document differs from the stored tool; empty when a PUT
 * would be a no-op. Fields the service derives (an absent summary) are not compared.
 */
export function documentChanges(local: ToolDocument, remote: ToolView): string[] {
  // The same normalization the service applies; the summary it derives when absent is not compared.
  const want: Record<string, unknown> = { ...normalizeDocument(local, Number.MAX_SAFE_INTEGER) };
  if (local.summary === undefined) delete want.summary;
  const have: Record<string, unknown> = { ...remote, extensions: extensionsOf(remote) };
  const changed: string[] = [];
  for (const [field, value] of Object.entries(want)) {
    if (canonicalJson(value) !== canonicalJson(have[field] ?? null)) changed.push(field);
  }
  if (remote.status === 'retired') changed.push('status');
  return changed;
}
