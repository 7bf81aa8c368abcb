/** RFC 6901 JSON pointers: escaping one reference token, and lookups. */

/** RFC 6901 escaping of one reference token. */
export function escapePointer(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** What resolvePointer returns when the pointer names nothing. */
export const MISSING = Symbol('missing');

/** RFC 6901 lookup over own properties only (no prototype chain). */
export function resolvePointer(document: unknown, pointer: string): unknown {
  if (pointer === '') return document;
  let current: unknown = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current) && /^(0|[1-9]\d*)$/.test(token) && Number(token) < current.length) current = current[Number(token)];
    else if (typeof current === 'object' && current !== null && !Array.isArray(current) && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else return MISSING;
  }
  return current;
}
