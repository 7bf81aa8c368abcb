import { resolveLocalRef } from './openai-strict.js';

/**
 * The reverse of the strict rendering (`strict-rendering.ts`): there an optional property became
 * required and nullable, so a model in strict mode sends `null` where it means "not given". Before
 * arguments are checked against the tool's ORIGINAL schema, such a `null` is dropped: at any depth,
 * for a key that the schema declares, no part of it requires, and whose every applicable schema
 * refuses `null`. It needs no flag from the caller: a `null` the original schema refuses could
 * never have been valid, so reading it as "absent" changes no call that was valid; a `null` the
 * original schema may accept (a `"type": ["string", "null"]`, an untyped value, an open branch) is
 * never dropped. When unsure, the null stays (and validation judges it).
 */

type Json = Record<string, unknown>;
type Schema = Json | boolean;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** How deep `$ref`s and compositions are followed; past it nothing is dropped. */
const MAX_SCHEMA_DEPTH = 32;

/** What the arguments become, and the JSON pointers (into the arguments) of the nulls dropped. */
export interface AbsentNulls {
  arguments: Record<string, unknown>;
  dropped: string[];
}

/** `args` without the nulls that stand for absent optional properties of `parameters`. Pure: `args` is not changed. */
export function dropAbsentNulls(parameters: Json, args: Record<string, unknown>): AbsentNulls {
  const dropped: string[] = [];
  const out = stripObject(parameters, parameters, args, '', dropped);
  return { arguments: dropped.length === 0 ? args : out, dropped };
}

function stripObject(root: Json, schema: Schema, value: Json, at: string, dropped: string[]): Json {
  const out: Json = {};
  for (const [key, child] of Object.entries(value)) {
    const pointer = `${at}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`;
    if (child === null) {
      const facts = keyFacts(root, schema, key, 0);
      if (facts.declared && !facts.required && facts.rejects) {
        dropped.push(pointer);
        continue;
      }
      out[key] = child;
    } else {
      out[key] = strip(root, childSchema(root, schema, key, 0), child, pointer, dropped);
    }
  }
  return out;
}

function strip(root: Json, schema: Schema, value: unknown, at: string, dropped: string[]): unknown {
  if (schema === true || schema === false) return value;
  if (Array.isArray(value)) return value.map((item, i) => strip(root, itemSchema(root, schema, i, 0), item, `${at}/${i}`, dropped));
  if (isObject(value)) return stripObject(root, schema, value, at, dropped);
  return value;
}

interface KeyFacts {
  /** Some part of the schema lists the key in `required`. */
  required: boolean;
  /** Some part declares it in `properties`. */
  declared: boolean;
  /** The schema refuses `null` there whatever else holds. */
  rejects: boolean;
}

/** What `schema` (applied to an object) says about a `null` at `key`: its own words, `$ref` and `allOf` parts (all apply), `anyOf`/`oneOf` branches (one applies). */
function keyFacts(root: Json, schema: Schema, key: string, depth: number): KeyFacts {
  if (schema === true) return { required: false, declared: false, rejects: false };
  if (schema === false) return { required: false, declared: false, rejects: true };
  if (depth > MAX_SCHEMA_DEPTH) return { required: true, declared: false, rejects: false };
  const properties = isObject(schema.properties) ? schema.properties : undefined;
  const declared = properties !== undefined && Object.hasOwn(properties, key);
  const required = Array.isArray(schema.required) && schema.required.includes(key);
  let rejects: boolean;
  if (declared) rejects = refusesNull(root, properties[key] as Schema, depth + 1);
  else if (schema.patternProperties !== undefined) rejects = false; // a pattern may admit the key: unsure
  else rejects = schema.additionalProperties === false || (isObject(schema.additionalProperties) && refusesNull(root, schema.additionalProperties, depth + 1));
  const facts: KeyFacts = { required, declared, rejects };
  for (const part of conjuncts(root, schema)) merge(facts, keyFacts(root, part, key, depth + 1));
  for (const branches of disjuncts(schema, 'object')) {
    const each = branches.map((branch) => keyFacts(root, branch, key, depth + 1));
    // Required only when every branch requires it: a key one branch needs is still optional.
    merge(facts, { required: each.length > 0 && each.every((f) => f.required), declared: each.some((f) => f.declared), rejects: each.length > 0 && each.every((f) => f.rejects) });
  }
  return facts;
}

function merge(into: KeyFacts, more: KeyFacts): void {
  into.required ||= more.required;
  into.declared ||= more.declared;
  into.rejects ||= more.rejects;
}

/** True when `schema` refuses the value `null` for certain. */
function refusesNull(root: Json, schema: Schema, depth: number): boolean {
  if (typeof schema === 'boolean') return !schema;
  if (depth > MAX_SCHEMA_DEPTH) return false;
  if (schema.type !== undefined && !(Array.isArray(schema.type) ? schema.type : [schema.type]).includes('null')) return true;
  if (Array.isArray(schema.enum) && !schema.enum.includes(null)) return true;
  if (schema.const !== undefined && schema.const !== null) return true;
  if (conjuncts(root, schema).some((part) => refusesNull(root, part, depth + 1))) return true;
  return [schema.anyOf, schema.oneOf].some((branches) => Array.isArray(branches) && branches.length > 0 && branches.every((branch) => refusesNull(root, branch as Schema, depth + 1)));
}

/** The schemas that apply along with `schema` itself: its `$ref` target and its `allOf` parts. */
function conjuncts(root: Json, schema: Json): Schema[] {
  const parts: Schema[] = [];
  if (typeof schema.$ref === 'string') {
    // An unresolvable reference is no information: `true`.
    parts.push(resolveLocalRef(root, schema.$ref) ?? true);
  }
  if (Array.isArray(schema.allOf)) for (const part of schema.allOf) parts.push(part as Schema);
  return parts;
}

/** `anyOf`/`oneOf` groups, without the branches whose `type` rules out a value of `kind`. */
function disjuncts(schema: Json, kind: 'object' | 'array'): Schema[][] {
  const groups: Schema[][] = [];
  for (const branches of [schema.anyOf, schema.oneOf]) {
    if (!Array.isArray(branches)) continue;
    groups.push(
      (branches as Schema[]).filter((branch) => {
        if (typeof branch === 'boolean' || branch.type === undefined) return true;
        return (Array.isArray(branch.type) ? branch.type : [branch.type]).includes(kind);
      }),
    );
  }
  return groups;
}

/** The schema a value at `key` of an object must meet (every applicable part, as one `allOf`). */
function childSchema(root: Json, schema: Schema, key: string, depth: number): Schema {
  if (typeof schema === 'boolean' || depth > MAX_SCHEMA_DEPTH) return true;
  const parts: Schema[] = [];
  const properties = isObject(schema.properties) ? schema.properties : undefined;
  if (properties !== undefined && Object.hasOwn(properties, key)) parts.push(properties[key] as Schema);
  else if (isObject(schema.additionalProperties) && schema.patternProperties === undefined) parts.push(schema.additionalProperties);
  for (const part of conjuncts(root, schema)) parts.push(childSchema(root, part, key, depth + 1));
  for (const branches of disjuncts(schema, 'object')) parts.push({ anyOf: branches.map((branch) => childSchema(root, branch, key, depth + 1)) });
  return parts.length === 0 ? true : { allOf: parts };
}

/** The schema the `index`th item of an array must meet. */
function itemSchema(root: Json, schema: Schema, index: number, depth: number): Schema {
  if (typeof schema === 'boolean' || depth > MAX_SCHEMA_DEPTH) return true;
  const parts: Schema[] = [];
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : undefined;
  if (prefix !== undefined && index < prefix.length) parts.push(prefix[index] as Schema);
  else if (prefix !== undefined && Array.isArray(schema.items) && isObject(schema.additionalItems)) parts.push(schema.additionalItems);
  else if (isObject(schema.items)) parts.push(schema.items);
  for (const part of conjuncts(root, schema)) parts.push(itemSchema(root, part, index, depth + 1));
  for (const branches of disjuncts(schema, 'array')) parts.push({ anyOf: branches.map((branch) => itemSchema(root, branch, index, depth + 1)) });
  return parts.length === 0 ? true : { allOf: parts };
}
