/**
 * OpenAI's strict mode (Structured Outputs for function calling) as a checker: which parameter
 * schemas OpenAI accepts with `strict: true`, written from its published rules ("Supported
 * schemas" in the Structured Outputs guide):
 * - the root is an object, not an `anyOf`; every object lists all its properties in `required` and
 *   has `additionalProperties: false`; every schema has a `type` (or is an `anyOf`, `enum`, `const`
 *   or local `$ref`), and every array its `items`;
 * - only the keywords strict mode supports (no `allOf`, `oneOf`, `not`, conditionals,
 *   `patternProperties`, `minLength`, `default`, ... and no `x-` keywords), string formats from its
 *   list; `$ref` only to `#` or the schema's own `$defs`/`definitions`;
 * - at most 10 levels of object nesting and 5,000 properties in all; at most 120,000 characters of
 *   property names, definition names, enum and const values; at most 1,000 enum values, and at
 *   most 15,000 characters in one string enum of more than 250 values.
 * `strictRendering.ts` rewrites any schema into this subset and checks its output here.
 */

const KEYWORDS = new Set([
  'type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'anyOf', '$ref', '$defs', 'definitions',
  'description', 'title', 'pattern', 'format', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'minItems', 'maxItems',
]);
/** The string formats strict mode supports. */
export const STRICT_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
const TYPES = new Set(['string', 'number', 'boolean', 'integer', 'object', 'array', 'null']);
/** Keywords that may stand beside a `$ref`. */
const REF_SIBLINGS = new Set(['$ref', 'description', 'title']);

/** OpenAI's published size limits for a strict schema. */
export const STRICT_LIMITS = {
  objectDepth: 10,
  properties: 5000,
  stringChars: 120_000,
  enumValues: 1000,
  /** A string enum of more than `largeEnumValues` values holds at most `largeEnumChars` characters. */
  largeEnumValues: 250,
  largeEnumChars: 15_000,
} as const;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

interface Walk {
  root: Json;
  problems: string[];
  properties: number;
  stringChars: number;
  enumValues: number;
}

/** True when `parameters` can be sent with `strict: true` unchanged. */
export function openAiStrictCompatible(parameters: Json): boolean {
  return strictProblems(parameters).length === 0;
}

/** Why OpenAI would refuse `parameters` with `strict: true`, each naming its JSON pointer; none when it accepts it. */
export function strictProblems(parameters: Json): string[] {
  const walk: Walk = { root: parameters, problems: [], properties: 0, stringChars: 0, enumValues: 0 };
  if (parameters.type !== 'object') walk.problems.push('/: the root must be an object');
  if (parameters.anyOf !== undefined) walk.problems.push('/: the root must not be an anyOf');
  check(parameters, '', 0, walk);
  for (const key of ['$defs', 'definitions'] as const) {
    const defs = parameters[key];
    if (defs === undefined) continue;
    if (!isObject(defs)) {
      walk.problems.push(`/${key}: must be an object`);
      continue;
    }
    for (const [name, def] of Object.entries(defs)) {
      walk.stringChars += name.length;
      check(def, `/${key}/${escape(name)}`, 0, walk);
    }
  }
  if (walk.properties > STRICT_LIMITS.properties) walk.problems.push(`/: ${walk.properties} properties in all (at most ${STRICT_LIMITS.properties})`);
  if (walk.stringChars > STRICT_LIMITS.stringChars) walk.problems.push(`/: ${walk.stringChars} characters of names and values (at most ${STRICT_LIMITS.stringChars})`);
  if (walk.enumValues > STRICT_LIMITS.enumValues) walk.problems.push(`/: ${walk.enumValues} enum values in all (at most ${STRICT_LIMITS.enumValues})`);
  return walk.problems;
}

function check(schema: unknown, at: string, objectDepth: number, walk: Walk): void {
  const where = at || '/';
  if (!isObject(schema)) {
    walk.problems.push(`${where}: must be a schema object`);
    return;
  }
  for (const key of Object.keys(schema)) {
    if (!KEYWORDS.has(key)) walk.problems.push(`${where}: keyword '${key}' is not supported`);
    else if ((key === '$defs' || key === 'definitions') && at !== '') walk.problems.push(`${where}: ${key} only at the root`);
  }
  if (schema.$ref !== undefined) {
    checkRef(schema, where, walk);
    return;
  }
  if (schema.format !== undefined && !(typeof schema.format === 'string' && STRICT_FORMATS.has(schema.format))) walk.problems.push(`${where}: format '${String(schema.format)}' is not supported`);
  checkValues(schema, where, walk);
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.some((t) => typeof t !== 'string' || !TYPES.has(t))) walk.problems.push(`${where}: unknown type`);
  if (types.length === 0 && schema.anyOf === undefined && schema.enum === undefined && schema.const === undefined) walk.problems.push(`${where}: a schema needs a type`);
  if (types.includes('object') || schema.properties !== undefined) checkObject(schema, at, objectDepth, walk);
  if (types.includes('array') && schema.items === undefined) walk.problems.push(`${where}: an array needs items`);
  if (schema.items !== undefined) check(schema.items, `${at}/items`, objectDepth, walk);
  if (schema.anyOf !== undefined) {
    if (!Array.isArray(schema.anyOf) || schema.anyOf.length === 0) walk.problems.push(`${where}: anyOf must be a non-empty array`);
    else schema.anyOf.forEach((branch, i) => check(branch, `${at}/anyOf/${i}`, objectDepth, walk));
  }
}

function checkObject(schema: Json, at: string, objectDepth: number, walk: Walk): void {
  const where = at || '/';
  if (objectDepth >= STRICT_LIMITS.objectDepth) walk.problems.push(`${where}: objects nest deeper than ${STRICT_LIMITS.objectDepth} levels`);
  if (schema.additionalProperties !== false) walk.problems.push(`${where}: additionalProperties must be false`);
  const properties = isObject(schema.properties) ? schema.properties : {};
  const names = Object.keys(properties);
  walk.properties += names.length;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const missing = names.filter((name) => !required.has(name));
  if (missing.length > 0) walk.problems.push(`${where}: every property must be required (not: ${missing.join(', ')})`);
  if ([...required].some((name) => typeof name !== 'string' || !Object.hasOwn(properties, name))) walk.problems.push(`${where}: required names a property that is not declared`);
  for (const [name, child] of Object.entries(properties)) {
    walk.stringChars += name.length;
    check(child, `${at}/properties/${escape(name)}`, objectDepth + 1, walk);
  }
}

function checkRef(schema: Json, where: string, walk: Walk): void {
  for (const key of Object.keys(schema)) if (!REF_SIBLINGS.has(key)) walk.problems.push(`${where}: '${key}' beside $ref`);
  const ref = schema.$ref;
  if (typeof ref !== 'string' || resolveLocalRef(walk.root, ref) === undefined) walk.problems.push(`${where}: $ref '${String(ref)}' must name '#' or a schema under $defs/definitions`);
}

function checkValues(schema: Json, where: string, walk: Walk): void {
  if (schema.const !== undefined && typeof schema.const === 'string') walk.stringChars += schema.const.length;
  if (schema.enum === undefined) return;
  if (!Array.isArray(schema.enum) || schema.enum.length === 0) {
    walk.problems.push(`${where}: enum must be a non-empty array`);
    return;
  }
  walk.enumValues += schema.enum.length;
  const strings = schema.enum.filter((value): value is string => typeof value === 'string');
  const chars = strings.reduce((sum, value) => sum + value.length, 0);
  walk.stringChars += chars;
  if (strings.length > STRICT_LIMITS.largeEnumValues && chars > STRICT_LIMITS.largeEnumChars) {
    walk.problems.push(`${where}: an enum of ${strings.length} strings holds ${chars} characters (at most ${STRICT_LIMITS.largeEnumChars} past ${STRICT_LIMITS.largeEnumValues} values)`);
  }
}

/** The schema a local `$ref` names: `#` (the root) or `#/$defs/NAME` / `#/definitions/NAME`; undefined otherwise. */
export function resolveLocalRef(root: Json, ref: string): Json | undefined {
  if (ref === '#') return root;
  const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
  if (!match) return undefined;
  const defs = root[match[1]!];
  const name = match[2]!.replace(/~1/g, '/').replace(/~0/g, '~');
  const target = isObject(defs) ? defs[name] : undefined;
  return isObject(target) ? target : undefined;
}

function escape(name: string): string {
  return name.replace(/~/g, '~0').replace(/\//g, '~1');
}
