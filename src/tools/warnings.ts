import { escapePointer } from '../json-pointer.js';
import { ajvFor } from './json-schema.js';
import { unknownSchemaKeywords } from './schema-keywords.js';

/**
 * Warnings: what makes a valid tool harder to find or to call, reported with the publish
 * response and on the publisher's view of a stored tool, never a refusal unless the tenant asked
 * (settings' `warnings_as_errors`). Pure: computed from the document, so a stored tool's list is
 * computed on read and always follows the current rules.
 */
export const WARNING_CODES = ['parameter_description_missing', 'optional_parameter_description_missing', 'unknown_keyword', 'unknown_format'] as const;
export type WarningCode = (typeof WARNING_CODES)[number];

export interface ToolWarning {
  code: WarningCode;
  pointer: string;
  message: string;
}

/** The most warnings one tool reports: a generated schema may leave thousands of properties undescribed. */
export const MAX_WARNINGS = 100;

type JsonObject = Record<string, unknown>;
const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
const described = (schema: JsonObject) => typeof schema.description === 'string' && schema.description.trim() !== '';

/** Whether `code` names a warning (settings validate the codes they are given). */
export function isWarningCode(code: string): code is WarningCode {
  return (WARNING_CODES as readonly string[]).includes(code);
}

/** The target of a local `$ref` ("#/$defs/x"), to read the description a referenced property carries there. */
function resolveLocal(root: JsonObject, ref: unknown): JsonObject | undefined {
  if (typeof ref !== 'string' || !ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const token of ref.slice(2).split('/')) {
    const key = decodeURIComponent(token).replace(/~1/g, '/').replace(/~0/g, '~');
    node = isObject(node) && Object.hasOwn(node, key) ? node[key] : undefined;
  }
  return isObject(node) ? node : undefined;
}

// Where a parameter's own parameters sit: an object's properties, an array's items, the branches of
// a combination and the definitions references point to.
const SINGLE = ['items', 'additionalProperties', 'not', 'if', 'then', 'else', 'contains'];
const ARRAYS = ['prefixItems', 'allOf', 'anyOf', 'oneOf', 'items'];
const MAPS = ['$defs', 'definitions'];

/**
 * Every property of the parameters, at any depth, without a description (a model calling the tool
 * has only the name to go by), required ones and optional ones apart. Iterative: the validator
 * has bounded the depth, but breadth must not recurse.
 */
function descriptionWarnings(parameters: JsonObject): ToolWarning[] {
  const warnings: ToolWarning[] = [];
  const stack: { node: JsonObject; pointer: string }[] = [{ node: parameters, pointer: '/parameters' }];
  while (stack.length > 0) {
    const { node, pointer } = stack.pop()!;
    const required = new Set(Array.isArray(node.required) ? node.required.filter((n): n is string => typeof n === 'string') : []);
    if (isObject(node.properties)) {
      for (const [name, property] of Object.entries(node.properties)) {
        if (!isObject(property)) continue;
        const at = `${pointer}/properties/${escapePointer(name)}`;
        const target = resolveLocal(parameters, property.$ref);
        if (!described(property) && !(target && described(target))) {
          warnings.push(
            required.has(name)
              ? { code: 'parameter_description_missing', pointer: `${at}/description`, message: `required parameter '${name}' has no description: models must guess what to send` }
              : { code: 'optional_parameter_description_missing', pointer: `${at}/description`, message: `optional parameter '${name}' has no description` },
          );
        }
        stack.push({ node: property, pointer: at });
      }
    }
    for (const key of SINGLE) if (isObject(node[key])) stack.push({ node: node[key], pointer: `${pointer}/${key}` });
    for (const key of ARRAYS) {
      const value = node[key];
      if (Array.isArray(value)) value.forEach((sub, i) => isObject(sub) && stack.push({ node: sub, pointer: `${pointer}/${key}/${i}` }));
    }
    for (const key of MAPS) {
      const value = node[key];
      if (isObject(value)) for (const [name, sub] of Object.entries(value)) if (isObject(sub)) stack.push({ node: sub, pointer: `${pointer}/${key}/${escapePointer(name)}` });
    }
  }
  return warnings;
}

/** Keywords and formats the registry accepts but that mean nothing to a validator (typos are refused). */
function keywordWarnings(schema: JsonObject, pointer: string): ToolWarning[] {
  const ajv = ajvFor(schema);
  if (!ajv) return [];
  return unknownSchemaKeywords(schema, pointer, ajv)
    .filter((f) => !f.typo)
    .map((f) => ({ code: f.kind === 'format' ? ('unknown_format' as const) : ('unknown_keyword' as const), pointer: f.pointer, message: f.message }));
}

/**
 * The warnings of a tool document (as validated and stored), sorted by pointer then code, at most
 * `limit` of them. Only parameters' properties need descriptions; unknown keywords and formats
 * are reported in parameters and returns.
 */
export function toolWarnings(doc: { parameters?: unknown; returns?: unknown }, limit = MAX_WARNINGS): ToolWarning[] {
  const warnings: ToolWarning[] = [];
  if (isObject(doc.parameters)) warnings.push(...descriptionWarnings(doc.parameters), ...keywordWarnings(doc.parameters, '/parameters'));
  if (isObject(doc.returns)) warnings.push(...keywordWarnings(doc.returns, '/returns'));
  const seen = new Set<string>();
  return warnings
    .filter((w) => {
      const key = `${w.code}\u0000${w.pointer}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .sort((a, b) => (a.pointer < b.pointer ? -1 : a.pointer > b.pointer ? 1 : a.code < b.code ? -1 : a.code > b.code ? 1 : 0))
    .slice(0, limit);
}
