import type { Ajv } from 'ajv';

import { escapePointer } from '../json-pointer.js';
import { dialectInstances } from './json-schema.js';

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

let anyDialect: Set<string> | undefined;

/** Keywords of any supported draft: one unknown to a schema's own draft is a dialect mix-up, not an annotation. */
function keywordsOfAnyDialect(): Set<string> {
  anyDialect ??= new Set(dialectInstances().flatMap((ajv) => [...keywordsOf(ajv)]));
  return anyDialect;
}

/** Edit distance counting a swap of neighbours as one edit (optimal string alignment), case-insensitive. */
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  const rows: number[][] = Array.from({ length: x.length + 1 }, (_, i) => Array.from({ length: y.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= x.length; i += 1) {
    for (let j = 1; j <= y.length; j += 1) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = best;
    }
  }
  return rows[x.length]![y.length]!;
}

/** The closest of `candidates` to `word` within `limit` edits, if any. */
function closest(word: string, candidates: Iterable<string>, limit: number): string | undefined {
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    const d = distance(word, candidate);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}

/**
 * A typo of a known name: within one edit for short words, one per four characters for longer
 * ones (`minimun`, `maxLenght`, `propertys`, `emial`). Whole other words (`optional`, `choices`,
 * format `path`, two edits from `date`) are not typos: servers publish them on purpose.
 */
function typoOf(word: string, candidates: Iterable<string>): string | undefined {
  return closest(word, candidates, Math.max(1, Math.floor(word.length / 4)));
}

function unknownKeywordMessage(keyword: string, keywords: Set<string>): string {
  const best = closest(keyword, keywords, 2);
  const hint = best ? `; did you mean "${best}"?` : '';
  return `unknown JSON Schema keyword "${keyword}" (models would be sent it as if it meant something; use an "x-" prefix for your own annotations)${hint}`;
}

/** An unknown keyword or format found in a schema; `typo` when it is a misspelling of a known one. */
interface KeywordFinding {
  pointer: string;
  message: string;
  kind: 'keyword' | 'format';
  typo: boolean;
}

/**
 * Every keyword in a schema and its subschemas that the schema's dialect does not define (the set
 * Ajv's strict mode accepts for that draft, plus `x-` annotations), and every `format` Ajv does
 * not know, each with its pointer. Values that are data (`enum`, `const`, `default`, `examples`)
 * and property names are not keywords and are not inspected. Iterative: the caller has already
 * bounded the depth, but hostile breadth must not recurse either.
 */
export function unknownSchemaKeywords(schema: JsonObject, rootPointer: string, ajv: Ajv): KeywordFinding[] {
  const keywords = keywordsOf(ajv);
  const issues: KeywordFinding[] = [];
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
        // Refused keywords (`$async`, `id`) and another draft's keywords are never mere annotations:
        // they are refused like typos.
        issues.push({ pointer: at, message: unknownKeywordMessage(key, keywords), kind: 'keyword', typo: REFUSED.has(key) || keywordsOfAnyDialect().has(key) || typoOf(key, keywords) !== undefined });
        continue;
      }
      if (key === 'format' && typeof value === 'string' && ajv.formats[value] === undefined) {
        issues.push({
          pointer: at,
          message: `unknown format "${value}" (not checked); known formats: ${Object.keys(ajv.formats).join(', ')}`,
          kind: 'format',
          typo: typoOf(value, Object.keys(ajv.formats)) !== undefined,
        });
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
