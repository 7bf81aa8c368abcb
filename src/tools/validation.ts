import type { Ajv } from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020.js';
import semver from 'semver';

import { AppError, type ErrorDetail } from '../errors.js';
import { escapePointer } from '../json-pointer.js';
import { ajvErrorsToDetails, ajvFor, compileSchema, metaValidate } from './json-schema.js';
import { patternProblem } from './linear-pattern.js';
import { type DocumentLimits, type ToolDocument, type ToolDocumentInput, toolDocumentSchema } from './model.js';
import { normalizeDocument } from './normalize.js';
import { policyRuleProblems } from './policy-rule.js';
import { unknownSchemaKeywords } from './schema-keywords.js';

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Outcome of validating a tool document: the normalized document or every problem found. */
type ValidationResult = { ok: true; document: ToolDocument } | { ok: false; issues: ErrorDetail[] };

/** Validates tool documents against configurable limits; built once per app. */
export class ToolValidator {
  private readonly shape: ReturnType<Ajv['compile']>;

  constructor(private readonly limits: DocumentLimits) {
    const ajv: Ajv = new Ajv2020({ allErrors: true, strict: false });
    this.shape = ajv.compile(toolDocumentSchema(limits));
  }

  /** Checks shape and every registration rule at once; pure apart from compiling schemas. */
  validate(input: unknown): ValidationResult {
    if (!isObject(input)) return { ok: false, issues: [{ pointer: '/', message: 'must be a JSON object' }] };
    const issues = this.shape(input) ? [] : ajvErrorsToDetails(this.shape.errors);
    issues.push(...textProblems(input));
    const doc = input as Partial<ToolDocumentInput> & JsonObject;

    if (typeof doc.version === 'string' && semver.valid(doc.version) === null) {
      issues.push({ pointer: '/version', message: 'must be a semantic version such as 1.2.0' });
    }
    if (doc.sensitivity === 'high' && (!Array.isArray(doc.required_scopes) || doc.required_scopes.length === 0)) {
      issues.push({ pointer: '/required_scopes', message: 'a tool with sensitivity "high" must declare required_scopes' });
    }
    if (isObject(doc.parameters)) {
      issues.push(...this.checkSchema(doc.parameters, '/parameters', true));
    }
    if (isObject(doc.returns)) issues.push(...this.checkSchema(doc.returns, '/returns', false));
    if (issues.length === 0) doc.policy?.forEach((rule, i) => issues.push(...policyRuleProblems(rule, `/policy/${i}`)));
    // Extensions are stored as sent: bound their nesting too, or hashing and storing them
    // (recursive JSON.stringify) overflows the stack on hostile input.
    for (const [key, value] of Object.entries(doc)) {
      if (key.startsWith('x-') && exceedsDepth(value, this.limits.schemaDepth)) {
        issues.push({ pointer: `/${escapePointer(key)}`, message: `nesting exceeds ${this.limits.schemaDepth} levels` });
      }
    }

    if (issues.length > 0) return { ok: false, issues: dedupe(issues) };
    return { ok: true, document: normalizeDocument(doc as ToolDocumentInput, this.limits.summaryLength) };
  }

  /**
   * The publish input check every door shares (POST and PUT /v1/tools; the CLI reaches them):
   * the normalized document, or a 400 naming every field. `pathName` is the name a PUT addresses,
   * which the document must carry. ToolService's writes take only the `ToolDocument` this returns.
   */
  check(input: unknown, pathName?: string): ToolDocument {
    const result = this.validate(input);
    if (!result.ok) throw new AppError('validation_failed', 'tool document is invalid', result.issues.map((issue) => ({ ...issue, in: 'body' as const })));
    if (pathName !== undefined && result.document.name !== pathName) {
      throw new AppError('validation_failed', 'tool document is invalid', [{ pointer: '/name', message: `must equal the name in the path ('${pathName}')`, in: 'body' }]);
    }
    return result.document;
  }

  /**
   * The normalized document when `input` has a tool document's shape, without the schema checks
   * (meta-validation, compilation, ~5 ms a tool): enough to recognize content already stored, which
   * passed every check when it was published (catalog sync compares it by content hash). Undefined
   * when the shape is wrong: run validate() for the details.
   */
  recognize(input: unknown): ToolDocument | undefined {
    if (!isObject(input) || exceedsDepth(input, this.limits.schemaDepth + 2) || !this.shape(input)) return undefined;
    if (textProblems(input).length > 0) return undefined;
    return normalizeDocument(input as ToolDocumentInput, this.limits.summaryLength);
  }

  private checkSchema(schema: JsonObject, pointer: string, isParameters: boolean): ErrorDetail[] {
    const { issues: structural, tooDeep } = walkSchema(schema, pointer, this.limits.schemaDepth, isParameters);
    if (isParameters && schema.type !== 'object') {
      structural.push({ pointer: `${pointer}/type`, message: 'the parameters root must be "type": "object"' });
    }
    // Too deep: meta-validation would recurse as deep, so report the depth alone.
    if (tooDeep) return structural;
    const problems = [...structural, ...metaValidate(schema, pointer), ...keywordProblems(schema, pointer)];
    // Compile only a clean schema: never one with remote references.
    if (problems.length > 0) return problems;
    try {
      compileSchema(schema);
    } catch (error) {
      return [{ pointer, message: `does not compile: ${(error as Error).message}` }];
    }
    return [];
  }
}

/**
 * Misspelt keywords and formats (`minimun`), for a dialect the registry supports. Other unknown
 * ones (`optional`, format `path`) are accepted and reported as warnings (warnings.ts).
 */
function keywordProblems(schema: JsonObject, pointer: string): ErrorDetail[] {
  const ajv = ajvFor(schema);
  return ajv ? unknownSchemaKeywords(schema, pointer, ajv).filter((f) => f.typo).map(({ pointer: at, message }) => ({ pointer: at, message })) : [];
}

/**
 * Patterns per schema at most. Each is compiled at publish and on the first authorize of a
 * revision, in the event loop: a 232 KB schema of patterns held it 1.7-2.3 s per dry run.
 */
const MAX_SCHEMA_PATTERNS = 128;

const REF_KEYWORDS = ['$ref', '$dynamicRef', '$recursiveRef'];
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];

/**
 * One iterative pass over a schema: depth limit, local-only references and, for parameter
 * schemas, every required property defined. Iterative so hostile nesting cannot overflow the
 * stack. (A property without a description is a warning, not a refusal: warnings.ts.)
 */
function walkSchema(
  root: JsonObject,
  rootPointer: string,
  maxDepth: number,
  parameters: boolean,
): { issues: ErrorDetail[]; tooDeep: boolean } {
  const issues: ErrorDetail[] = [];
  let tooDeep = false;
  let patterns = 0;
  const stack: { node: unknown; pointer: string; depth: number; described: boolean }[] = [
    { node: root, pointer: rootPointer, depth: 0, described: parameters },
  ];
  while (stack.length > 0) {
    const { node, pointer, depth, described } = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    // Arrays count too: `"enum": [[[[...]]]]` must not slip past the limit into Ajv and hashing.
    if (depth > maxDepth) {
      if (!tooDeep) issues.push({ pointer, message: `schema nesting exceeds ${maxDepth} levels` });
      tooDeep = true;
      continue;
    }
    if (Array.isArray(node)) {
      node.forEach((child, i) => stack.push({ node: child, pointer: `${pointer}/${i}`, depth: depth + 1, described: false }));
      continue;
    }
    if (!isObject(node)) continue;
    for (const keyword of REF_KEYWORDS) {
      const ref = node[keyword];
      if (ref !== undefined && (typeof ref !== 'string' || !ref.startsWith('#'))) {
        issues.push({ pointer: `${pointer}/${escapePointer(keyword)}`, message: 'only local references ("#/...") are allowed; remote references are never fetched' });
      }
    }
    if (described) issues.push(...undefinedRequired(node, pointer));
    const found = [
      ...(typeof node.pattern === 'string' ? [{ pattern: node.pattern, at: `${pointer}/pattern` }] : []),
      ...(isObject(node.patternProperties) ? Object.keys(node.patternProperties).map((key) => ({ pattern: key, at: `${pointer}/patternProperties/${escapePointer(key)}` })) : []),
    ];
    for (const { pattern, at } of found) {
      patterns += 1;
      // Past the limit, stop compiling: the count alone refuses the schema.
      if (patterns === MAX_SCHEMA_PATTERNS + 1) issues.push({ pointer: at, message: `a schema may hold at most ${MAX_SCHEMA_PATTERNS} patterns (pattern and patternProperties keys)` });
      if (patterns > MAX_SCHEMA_PATTERNS) continue;
      const problem = patternProblem(pattern);
      if (problem) issues.push({ pointer: at, message: problem });
    }
    for (const [key, child] of Object.entries(node)) {
      const childPointer = `${pointer}/${escapePointer(key)}`;
      if (SUBSCHEMA_MAPS.includes(key) && isObject(child)) {
        for (const [name, sub] of Object.entries(child)) {
          // Nested object parameters are parameters too: their required fields must be defined.
          stack.push({ node: sub, pointer: `${childPointer}/${escapePointer(name)}`, depth: depth + 1, described: described && key === 'properties' });
        }
      } else if (typeof child === 'object' && child !== null) {
        stack.push({ node: child, pointer: childPointer, depth: depth + 1, described: described && key === 'items' });
      }
    }
  }
  return { issues, tooDeep };
}

// C0 controls but tab, newline and carriage return; DEL and C1 controls; unpaired UTF-16 surrogates
// (PostgreSQL's text and jsonb cannot store NUL or unpaired surrogates: they would fail as a 500).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const BAD_TEXT = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// Only what no parser reads the same way and PostgreSQL cannot store: NUL and unpaired surrogates.
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const UNSTORABLE_TEXT = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const MAX_TEXT_ISSUES = 20;

/**
 * Every string and key of a value holding control characters or unpaired surrogates (iterative).
 * `controls: false` lets other control characters through (call arguments may carry them: an
 * escape sequence for a terminal tool) and refuses only NUL and unpaired surrogates.
 */
export function textProblems(value: unknown, rootPointer = '', options: { controls?: boolean } = {}): ErrorDetail[] {
  const bad = options.controls === false ? UNSTORABLE_TEXT : BAD_TEXT;
  const what = options.controls === false ? 'NUL or unpaired surrogates' : 'control characters or unpaired surrogates';
  const issues: ErrorDetail[] = [];
  const stack: { node: unknown; pointer: string }[] = [{ node: value, pointer: rootPointer }];
  while (stack.length > 0 && issues.length < MAX_TEXT_ISSUES) {
    const { node, pointer } = stack.pop()!;
    if (typeof node === 'string') {
      if (bad.test(node)) issues.push({ pointer: pointer || '/', message: `must not contain ${what}` });
    } else if (Array.isArray(node)) {
      node.forEach((child, i) => stack.push({ node: child, pointer: `${pointer}/${i}` }));
    } else if (isObject(node)) {
      for (const [key, child] of Object.entries(node)) {
        const childPointer = `${pointer}/${escapePointer(key)}`;
        if (bad.test(key)) issues.push({ pointer: childPointer, message: `property names must not contain ${what}` });
        stack.push({ node: child, pointer: childPointer });
      }
    }
  }
  return issues;
}

/** Whether `value` nests objects or arrays deeper than `maxDepth` (iterative: safe on hostile input). */
export function exceedsDepth(value: unknown, maxDepth: number): boolean {
  const stack: { node: unknown; depth: number }[] = [{ node: value, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= maxDepth) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) stack.push({ node: child, depth: depth + 1 });
  }
  return false;
}

function undefinedRequired(node: JsonObject, pointer: string): ErrorDetail[] {
  if (!Array.isArray(node.required)) return [];
  const properties = isObject(node.properties) ? node.properties : {};
  const issues: ErrorDetail[] = [];
  for (const name of node.required) {
    if (typeof name !== 'string' || isObject(Object.hasOwn(properties, name) ? properties[name] : undefined)) continue;
    issues.push({ pointer: `${pointer}/properties/${escapePointer(name)}`, message: `required parameter '${name}' is not defined in properties` });
  }
  return issues;
}

function dedupe(issues: ErrorDetail[]): ErrorDetail[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const key = `${i.pointer}\u0000${i.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
