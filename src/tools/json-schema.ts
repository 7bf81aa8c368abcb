import { Ajv, type ErrorObject } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

import type { ErrorDetail } from '../errors.js';
import { escapePointer } from '../json-pointer.js';
import { linearRegExp } from './linear-pattern.js';
import { isUrl } from './url-format.js';

/**
 * Compiling publisher-supplied JSON Schemas. Two Ajv instances (draft 2020-12, the default, and
 * draft-07); neither has `loadSchema`, so no `$ref` is ever fetched. Patterns go through
 * linearRegExp: matched by RE2 in linear time, never on an unbounded string.
 */
const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-07\/schema#?$/;
const DRAFT_2020 = /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;

function makeAjv<T extends Ajv>(AjvClass: new (options: object) => T): T {
  // logger: false: an unknown format is accepted with a warning to the publisher (tools/warnings.ts),
  // not logged to the service's console at every compilation.
  const ajv = new AjvClass({ allErrors: true, strict: false, validateFormats: true, logger: false, code: { regExp: linearRegExp } });
  addFormats.default(ajv);
  ajv.addFormat('url', { type: 'string', validate: isUrl });
  return ajv;
}

/**
 * Compiling instances, one per dialect, each replaced after this many compilations. Ajv keeps the
 * names and generated code of every compilation in its instance's scope (removeSchema drops only
 * the cache entry), so compiling each published tool's parameters with one instance grew the
 * service's heap without bound: ~13 KB per tool, 6,010 SchemaEnv objects and ~52 MB of strings
 * live after a full GC once 6,000 tools were registered. A validator compiled earlier keeps the
 * instance it came from, which is freed with the last of them. A new instance costs ~0.5 ms
 * against ~1 ms per compilation.
 */
const COMPILATIONS_PER_INSTANCE = 200;

class CompilingAjv {
  private instance: Ajv;
  private compilations = 0;

  constructor(private readonly make: () => Ajv) {
    this.instance = make();
  }

  next(): Ajv {
    if (this.compilations >= COMPILATIONS_PER_INSTANCE) {
      this.instance = this.make();
      this.compilations = 0;
    }
    this.compilations += 1;
    return this.instance;
  }
}

// Meta-validation and keyword lookups use instances that never compile a publisher's schema.
const ajv2020 = makeAjv(Ajv2020);
const ajv07 = makeAjv(Ajv);
const compiling = new Map<Ajv, CompilingAjv>([
  [ajv2020, new CompilingAjv(() => makeAjv(Ajv2020))],
  [ajv07, new CompilingAjv(() => makeAjv(Ajv))],
]);

/** The Ajv instance for a schema's `$schema`, or undefined for an unsupported dialect. */
export function ajvFor(schema: Record<string, unknown>): Ajv | undefined {
  const dialect = schema.$schema;
  if (dialect === undefined || (typeof dialect === 'string' && DRAFT_2020.test(dialect))) return ajv2020;
  if (typeof dialect === 'string' && DRAFT_07.test(dialect)) return ajv07;
  return undefined;
}

/** Every supported dialect's (non-compiling) instance: what any draft the registry accepts knows. */
export function dialectInstances(): Ajv[] {
  return [ajv2020, ajv07];
}

/** Ajv errors as JSON-pointer details, prefixed with where the validated value sits. */
export function ajvErrorsToDetails(errors: ErrorObject[] | null | undefined, prefix = ''): ErrorDetail[] {
  return (errors ?? []).map((e) => {
    let pointer = prefix + e.instancePath;
    if (e.keyword === 'required') pointer += `/${escapePointer(String(e.params.missingProperty))}`;
    if (e.keyword === 'additionalProperties') pointer += `/${escapePointer(String(e.params.additionalProperty))}`;
    return { pointer: pointer || '/', message: e.message ?? 'is invalid' };
  });
}

export type CompiledValidator = (data: unknown) => ErrorDetail[];

/**
 * Compiles a JSON Schema into a validator returning pointer details (empty when valid). Throws
 * with Ajv's message when the schema does not compile. The schema is not kept in Ajv's cache (the
 * same `$id` compiles again), and compiling instances are replaced (COMPILATIONS_PER_INSTANCE),
 * so compiling many publisher schemas does not grow memory.
 */
export function compileSchema(schema: Record<string, unknown>): CompiledValidator {
  const dialect = ajvFor(schema);
  if (!dialect) throw new Error(`unsupported $schema ${JSON.stringify(schema.$schema)}`);
  const ajv = compiling.get(dialect)!.next();
  try {
    const validate = ajv.compile(schema);
    return (data) => (validate(data) ? [] : ajvErrorsToDetails(validate.errors));
  } finally {
    ajv.removeSchema(schema);
  }
}

/** Meta-validation of a schema against its dialect: pointer details relative to `prefix`. */
export function metaValidate(schema: Record<string, unknown>, prefix: string): ErrorDetail[] {
  const ajv = ajvFor(schema);
  if (!ajv) return [{ pointer: `${prefix}/$schema`, message: 'must be draft 2020-12 or draft-07 (or absent for 2020-12)' }];
  if (ajv.validateSchema(schema) as boolean) return [];
  return ajvErrorsToDetails(ajv.errors, prefix);
}
