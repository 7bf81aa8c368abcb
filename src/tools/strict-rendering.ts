import { STRICT_FORMATS, strictProblems } from './openai-strict.js';

/**
 * Rewrites a tool's parameters into OpenAI's strict subset, so that a runtime can send any tool
 * with `strict: true`. What a strict call may carry stays inside what the original schema
 * accepts, up to the constraints moved into descriptions (which /v1/authorize still enforces):
 * - every property is required; one the original leaves optional becomes nullable (a `null` type,
 *   a `null` enum value or an `anyOf` branch), and /v1/authorize reads a `null` the original does
 *   not accept for it as "absent" (`strict-nulls.ts`);
 * - every object gets `additionalProperties: false` (extra keys it allowed can no longer be sent);
 * - keywords strict mode lacks (`minLength`, `default`, `not`, conditionals, `x-`, ...) become a
 *   line of the schema's description; `oneOf` becomes `anyOf` when its branches cannot overlap;
 *   `allOf` of objects is merged;
 * - what cannot be said at all (an untyped value, an open map, tuple items, a remote-looking `$ref`,
 *   an overlapping `oneOf`, a size limit) gives no rendering but the reason, and the runtime gets
 *   the ordinary one with `strict: false`.
 */

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A strict rendering, or why there is none. */
export type StrictRendering = { ok: true; parameters: Json } | { ok: false; reason: string };

/** Kept as they are (after rewriting their subschemas). */
const KEPT = new Set(['type', 'enum', 'const', 'description', 'title', 'pattern', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'minItems', 'maxItems']);
/** Annotations with no meaning for a call: dropped. */
const DROPPED = new Set(['$schema', '$id', '$anchor', '$comment', 'deprecated', 'readOnly', 'writeOnly', '$dynamicAnchor']);
/** Handled by the rewrite itself. */
const STRUCTURAL = new Set(['properties', 'required', 'additionalProperties', 'items', 'anyOf', 'oneOf', 'allOf', '$ref', '$defs', 'definitions', 'format', 'patternProperties']);
/** Longest rendering of one moved keyword's value in a description. */
const MOVED_VALUE_CHARS = 200;

class Unsupported extends Error {}

/** `parameters` in OpenAI's strict subset, or the reason it cannot be. Pure: the input is not changed. */
export function toOpenAiStrict(parameters: Json): StrictRendering {
  try {
    const defs: Json = {};
    for (const key of ['$defs', 'definitions'] as const) {
      const found = parameters[key];
      if (found === undefined) continue;
      if (!isObject(found)) throw new Unsupported(`/${key} is not an object`);
      for (const [name, def] of Object.entries(found)) defs[name] = rewrite(def, `/${key}/${name}`);
    }
    const root = rewrite(parameters, '');
    if (root.type !== 'object' || root.anyOf !== undefined) throw new Unsupported('the root is not a plain object');
    const rendered: Json = Object.keys(defs).length > 0 ? { ...root, $defs: defs } : root;
    // Refs were written against either defs keyword; the rendering keeps one.
    const normalized = parameters.definitions === undefined ? rendered : (renameRefs(rendered) as Json);
    const problems = strictProblems(normalized);
    if (problems.length > 0) return { ok: false, reason: problems[0]! };
    return { ok: true, parameters: normalized };
  } catch (error) {
    if (error instanceof Unsupported) return { ok: false, reason: error.message };
    throw error;
  }
}

function rewrite(input: unknown, at: string): Json {
  const where = at || '/';
  if (!isObject(input)) throw new Unsupported(`${where}: a boolean schema has no strict form`);
  const schema = mergeAllOf(input, where);
  const out: Json = {};
  const moved: string[] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (KEPT.has(key)) out[key] = value;
    else if (DROPPED.has(key)) continue;
    else if (!STRUCTURAL.has(key)) moved.push(`${key}: ${shortJson(value)}`);
  }
  if (schema.format !== undefined) {
    if (typeof schema.format === 'string' && STRICT_FORMATS.has(schema.format)) out.format = schema.format;
    else moved.push(`format: ${shortJson(schema.format)}`);
  }
  if (schema.$ref !== undefined) {
    if (typeof schema.$ref !== 'string' || !/^#($|\/(\$defs|definitions)\/[^/]+$)/.test(schema.$ref)) throw new Unsupported(`${where}: $ref '${String(schema.$ref)}' is not '#' or a definition`);
    // Strict mode takes only a description beside a $ref: the rest moves into it.
    for (const key of Object.keys(out)) if (key !== 'description' && key !== 'title') moved.push(`${key}: ${shortJson(out[key])}`);
    return withMoved({ $ref: schema.$ref, ...(typeof out.description === 'string' ? { description: out.description } : {}) }, moved);
  }
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  // Beside the object's own properties, anyOf/oneOf only constrain which of them must be given
  // (e.g. "a or b"): a rule for the description, which /v1/authorize still enforces.
  const constraintOnly = schema.properties !== undefined;
  if (constraintOnly) for (const key of ['anyOf', 'oneOf'] as const) if (schema[key] !== undefined) moved.push(`${key}: ${shortJson(schema[key])}`);
  const branches = constraintOnly ? undefined : (schema.anyOf ?? (schema.oneOf !== undefined ? disjointOneOf(schema.oneOf, where) : undefined));
  if (branches !== undefined) {
    if (!Array.isArray(branches) || branches.length === 0) throw new Unsupported(`${where}: anyOf is not a non-empty array`);
    out.anyOf = branches.map((branch: unknown, i) => rewrite(typed(branch, types), `${at}/anyOf/${i}`));
    // The branches carry the type: an outer one beside them would be a second constraint.
    delete out.type;
  } else if (types.length === 0 && schema.enum === undefined && schema.const === undefined) {
    if (schema.properties !== undefined) out.type = 'object';
    else throw new Unsupported(`${where}: a value of any type has no strict form`);
  }
  const outTypes = out.type === undefined ? [] : Array.isArray(out.type) ? out.type : [out.type];
  if (outTypes.includes('object')) rewriteObject(schema, out, at, moved);
  if (outTypes.includes('array')) {
    if (schema.items === undefined) throw new Unsupported(`${where}: an array with items of any type has no strict form`);
    if (Array.isArray(schema.items) || schema.prefixItems !== undefined) throw new Unsupported(`${where}: tuple items have no strict form`);
    out.items = rewrite(schema.items, `${at}/items`);
  }
  return withMoved(out, moved);
}

function rewriteObject(schema: Json, out: Json, at: string, moved: string[]): void {
  const where = at || '/';
  const properties = isObject(schema.properties) ? schema.properties : {};
  const names = Object.keys(properties);
  // An open map (keys not known in advance) cannot be said with additionalProperties: false; a
  // root without properties is a tool that takes no arguments (MCP's `{"type": "object"}`).
  if (names.length === 0 && schema.additionalProperties !== false && at !== '') throw new Unsupported(`${where}: an object with free-form keys has no strict form`);
  if (schema.patternProperties !== undefined) moved.push(`patternProperties: ${shortJson(schema.patternProperties)}`);
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : []);
  const missing = [...required].filter((name) => !(name in properties));
  // A required key with no declared schema could not be sent at all.
  if (missing.length > 0) throw new Unsupported(`${where}: required '${missing[0]!}' is not a declared property`);
  const rewritten: Json = {};
  for (const name of names) {
    const child = rewrite(properties[name], `${at}/properties/${name}`);
    rewritten[name] = required.has(name) ? child : nullable(child);
  }
  out.properties = rewritten;
  out.required = names;
  out.additionalProperties = false;
}

/** `schema` also accepting `null` (an optional property: null stands for absent). */
export function nullable(schema: Json): Json {
  if (acceptsNull(schema)) return schema;
  if (schema.$ref !== undefined || schema.const !== undefined) {
    const { description, ...rest } = schema;
    return { anyOf: [rest, { type: 'null' }], ...(description === undefined ? {} : { description }) };
  }
  if (Array.isArray(schema.anyOf)) return { ...schema, anyOf: [...schema.anyOf, { type: 'null' }] };
  if (schema.type === undefined) return { ...schema, enum: [...(schema.enum as unknown[]), null] };
  const out: Json = { ...schema, type: [...(Array.isArray(schema.type) ? schema.type : [schema.type]), 'null'] };
  if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
  return out;
}

function acceptsNull(schema: Json): boolean {
  if (Array.isArray(schema.anyOf)) return schema.anyOf.some((branch) => isObject(branch) && acceptsNull(branch));
  if (schema.$ref !== undefined) return false;
  if (schema.const !== undefined) return schema.const === null;
  if (schema.type === undefined) return Array.isArray(schema.enum) && schema.enum.includes(null);
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return types.includes('null') && (!Array.isArray(schema.enum) || schema.enum.includes(null));
}

/** An `allOf` merged into its schema when its parts are objects (or annotations) whose properties do not collide. */
function mergeAllOf(schema: Json, where: string): Json {
  if (schema.allOf === undefined) return schema;
  if (!Array.isArray(schema.allOf)) throw new Unsupported(`${where}: allOf is not an array`);
  const { allOf, ...merged } = schema;
  for (const part of allOf as unknown[]) {
    if (!isObject(part)) throw new Unsupported(`${where}: allOf holds a boolean schema`);
    const inner = mergeAllOf(part, where);
    for (const [key, value] of Object.entries(inner)) {
      if (key === 'properties' && isObject(value)) {
        const mine = isObject(merged.properties) ? merged.properties : {};
        for (const name of Object.keys(value)) if (name in mine) throw new Unsupported(`${where}: allOf declares '${name}' twice`);
        merged.properties = { ...mine, ...value };
      } else if (key === 'required' && Array.isArray(value)) {
        merged.required = [...new Set([...(Array.isArray(merged.required) ? merged.required : []), ...value])];
      } else if (key === 'description' && typeof value === 'string') {
        merged.description = typeof merged.description === 'string' ? `${merged.description}\n${value}` : value;
      } else if (key === 'additionalProperties' && value !== false) {
        // An open part adds no property: the merged object's own setting stands.
      } else if (key in merged && JSON.stringify(merged[key]) !== JSON.stringify(value)) {
        throw new Unsupported(`${where}: allOf parts disagree on '${key}'`);
      } else {
        merged[key] = value;
      }
    }
  }
  return merged;
}

/**
 * `oneOf` branches as `anyOf` when no value can match two of them (anyOf would accept a value
 * matching two, which oneOf refuses): branches of different primitive types, or whose `const`/`enum`
 * values, or the `const`/`enum` of a property they all require, are disjoint.
 */
function disjointOneOf(oneOf: unknown, where: string): unknown[] {
  if (!Array.isArray(oneOf) || oneOf.length === 0 || !oneOf.every(isObject)) throw new Unsupported(`${where}: oneOf is not an array of schemas`);
  const branches = oneOf as Json[];
  for (let i = 0; i < branches.length; i += 1) {
    for (let j = i + 1; j < branches.length; j += 1) {
      if (!disjoint(branches[i]!, branches[j]!)) throw new Unsupported(`${where}: oneOf branches ${i} and ${j} may both match a value`);
    }
  }
  return branches;
}

function disjoint(a: Json, b: Json): boolean {
  const typesA = typeSet(a);
  const typesB = typeSet(b);
  if (typesA && typesB && ![...typesA].some((t) => typesB.has(t))) return true;
  const valuesA = valueSet(a);
  const valuesB = valueSet(b);
  if (valuesA && valuesB && ![...valuesA].some((v) => valuesB.has(v))) return true;
  const propsA = isObject(a.properties) ? a.properties : {};
  const propsB = isObject(b.properties) ? b.properties : {};
  const requiredA = new Set(Array.isArray(a.required) ? a.required : []);
  const requiredB = new Set(Array.isArray(b.required) ? b.required : []);
  for (const name of Object.keys(propsA)) {
    if (!requiredA.has(name) || !requiredB.has(name)) continue;
    const left = isObject(propsA[name]) ? valueSet(propsA[name]) : undefined;
    const right = isObject(propsB[name]) ? valueSet(propsB[name]) : undefined;
    if (left && right && ![...left].some((v) => right.has(v))) return true;
  }
  return false;
}

/** The JSON types a branch allows (integer counted as number: they overlap), or undefined when any. */
function typeSet(schema: Json): Set<string> | undefined {
  if (schema.type === undefined) return undefined;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  return new Set(types.map((t) => (t === 'integer' ? 'number' : String(t))));
}

/** The values a branch allows, as JSON text, when it lists them. */
function valueSet(schema: Json): Set<string> | undefined {
  if (schema.const !== undefined) return new Set([JSON.stringify(schema.const)]);
  if (Array.isArray(schema.enum)) return new Set(schema.enum.map((value) => JSON.stringify(value)));
  return undefined;
}

/** A branch of an `anyOf` inherits the type written beside it when it has none of its own. */
function typed(branch: unknown, types: unknown[]): unknown {
  if (!isObject(branch) || types.length === 0 || branch.type !== undefined || branch.$ref !== undefined || branch.anyOf !== undefined || branch.oneOf !== undefined) return branch;
  return { ...branch, type: types.length === 1 ? types[0] : types };
}

function withMoved(schema: Json, moved: string[]): Json {
  if (moved.length === 0) return schema;
  const note = `(${moved.join('; ')})`;
  return { ...schema, description: typeof schema.description === 'string' && schema.description !== '' ? `${schema.description} ${note}` : note };
}

function shortJson(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MOVED_VALUE_CHARS ? `${text.slice(0, MOVED_VALUE_CHARS - 1)}…` : text;
}

/** `#/definitions/X` refs as `#/$defs/X` (the rendering keeps its definitions under `$defs`). */
function renameRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(renameRefs);
  if (!isObject(value)) return value;
  const out: Json = {};
  for (const [key, child] of Object.entries(value)) {
    out[key] = key === '$ref' && typeof child === 'string' ? child.replace(/^#\/definitions\//, '#/$defs/') : renameRefs(child);
  }
  return out;
}
