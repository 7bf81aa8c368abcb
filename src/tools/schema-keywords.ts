import type { Ajv } from 'ajv';

import type { ErrorDetail } from '../errors.js';
import { escapePointer } from '../json-pointer.js';

type JsonObject = Record<string, unknown>;
const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

// Known to Ajv but not accepted here: `$async` makes validation asynchronous (authorize checks
// arguments synchronously); `id` is draft-04's spelling, which Ajv's strict mode refuses too.
const REFUSED = new Set(['$async', 'id']);

/** Keywords whose value is one subschema, an array of them, or a map of names to them. */
const SINGLE = new Set(['not', 'if', 'then', 'else', 'additionalItems', 'contains', 'additionalProperties', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties', 'contentSchema']);
const ARRAYS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);

const known = new WeakMap<Ajv, Set<string>>();

/** The keywords the dialect's Ajv instance knows: what its strict mode accepts. */
function keywordsOf(ajv: Ajv): Set<string> {
  let keywords = known.get(ajv);
  if (!keywords) {
    keywords = new Set(Object.keys(ajv.RULES.keywords).filter((k) => !REFUSED.has(k)));
    known.set(ajv, keywords);
  }
  return keywords;
}

/** Edit distance, for "did you mean" hints on typos such as `minimun`. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

function unknownKeywordMessage(keyword: string, keywords: Set<string>): string {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of keywords) {
    const d = distance(keyword, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  const hint = best ? `; did you mean "${best}"?` : '';
  return `unknown JSON Schema keyword "${keyword}" (models would be sent it as if it meant something; use an "x-" prefix for your own annotations)${hint}`;
}

/**
 * Every keyword in a schema and its subschemas that the schema's dialect does not define (the set
 * Ajv's strict mode accepts for that draft, plus `x-` annotations), and every `format` Ajv does
 * not know, each with its pointer. Values that are data (`enum`, `const`, `default`, `examples`)
 * and property names are not keywords and are not inspected. Iterative: the caller has already
 * bounded the depth, but hostile breadth must not recurse either.
 */
export function unknownSchemaKeywords(schema: JsonObject, rootPointer: string, ajv: Ajv): ErrorDetail[] {
  const keywords = keywordsOf(ajv);
  const issues: ErrorDetail[] = [];
  const stack: { node: unknown; pointer: string }[] = [{ node: schema, pointer: rootPointer }];
  const push = (node: unknown, pointer: string) => {
    if (isObject(node)) stack.push({ node, pointer });
  };
  while (stack.length > 0) {
    const { node, pointer } = stack.pop()!;
    if (!isObject(node)) continue;
    for (const [key, value] of Object.entries(node)) {
      const at = `${pointer}/${escapePointer(key)}`;
      if (key.startsWith('x-')) continue;
      if (!keywords.has(key)) {
        issues.push({ pointer: at, message: unknownKeywordMessage(key, keywords) });
        continue;
      }
      if (key === 'format' && typeof value === 'string' && ajv.formats[value] === undefined) {
        issues.push({ pointer: at, message: `unknown format "${value}"; known formats: ${Object.keys(ajv.formats).join(', ')}` });
      } else if (SINGLE.has(key)) {
        push(value, at);
      } else if (key === 'items') {
        if (Array.isArray(value)) value.forEach((item, i) => push(item, `${at}/${i}`));
        else push(value, at);
      } else if (ARRAYS.has(key) && Array.isArray(value)) {
        value.forEach((item, i) => push(item, `${at}/${i}`));
      } else if (MAPS.has(key) && isObject(value)) {
        // `dependencies` values may be arrays of property names: push() skips those.
        for (const [name, sub] of Object.entries(value)) push(sub, `${at}/${escapePointer(name)}`);
      }
    }
  }
  return issues;
}
