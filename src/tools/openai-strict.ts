/**
 * Whether OpenAI's strict mode (Structured Outputs for function calling) accepts a parameters
 * schema as it is. The registry never rewrites a publisher's schema to make it strict (that would
 * change what arguments mean, e.g. optional fields becoming nullable); it only says `strict: true`
 * when OpenAI would accept the schema unchanged:
 * - every object lists all its properties in `required` and has `additionalProperties: false`;
 * - only the keywords strict mode supports (no `allOf`, `oneOf`, `not`, conditionals,
 *   `patternProperties`, `minLength`, `default`, ... and no `x-` keywords), string formats from
 *   its list, the root an object;
 * - at most 10 levels of object nesting and 5,000 properties in all.
 */

const KEYWORDS = new Set([
  'type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'anyOf', '$ref', '$defs', 'definitions',
  'description', 'title', 'pattern', 'format', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'minItems', 'maxItems',
]);
const FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
const MAX_OBJECT_DEPTH = 10;
const MAX_PROPERTIES = 5000;

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** True when `parameters` can be sent with `strict: true` unchanged. */
export function openAiStrictCompatible(parameters: Json): boolean {
  if (parameters.type !== 'object' || parameters.anyOf !== undefined) return false;
  const budget = { properties: 0 };
  return strictSchema(parameters, 0, budget);
}

function strictSchema(schema: unknown, objectDepth: number, budget: { properties: number }): boolean {
  if (!isObject(schema)) return false;
  for (const key of Object.keys(schema)) if (!KEYWORDS.has(key)) return false;
  if (schema.format !== undefined && !(typeof schema.format === 'string' && FORMATS.has(schema.format))) return false;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const isObjectType = types.includes('object') || schema.properties !== undefined;
  if (isObjectType) {
    if (objectDepth >= MAX_OBJECT_DEPTH || schema.additionalProperties !== false) return false;
    const properties = isObject(schema.properties) ? schema.properties : {};
    const names = Object.keys(properties);
    budget.properties += names.length;
    if (budget.properties > MAX_PROPERTIES) return false;
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    if (names.some((name) => !required.has(name)) || required.size !== names.length) return false;
    if (!Object.values(properties).every((child) => strictSchema(child, objectDepth + 1, budget))) return false;
  }
  if (schema.items !== undefined && !strictSchema(schema.items, objectDepth, budget)) return false;
  if (schema.anyOf !== undefined && !(Array.isArray(schema.anyOf) && schema.anyOf.every((branch) => strictSchema(branch, objectDepth, budget)))) return false;
  for (const defs of [schema.$defs, schema.definitions]) {
    if (defs !== undefined && !(isObject(defs) && Object.values(defs).every((def) => strictSchema(def, objectDepth, budget)))) return false;
  }
  return true;
}
