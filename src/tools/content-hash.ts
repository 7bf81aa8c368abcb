import { createHash } from 'node:crypto';

import { canonicalJson } from './canonical-json.js';

/** SHA-256 of the canonical JSON: the identity of a tool's content. */
export function contentHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}
