import { MISSING, resolvePointer } from '../json-pointer.js';
import type { PolicyCondition, PolicyRule } from '../tools/model.js';

/**
 * Evaluation of a tool's argument-level policy rules at authorize time. Their shape and the
 * registration checks live beside the tool document (src/tools/policy-rule.ts).
 */

/**
 * Structural equality of JSON values: objects equal when they have the same keys with equal
 * values, whatever the key order (stored documents do not keep the publisher's order, and callers
 * choose theirs); arrays element by element. Iterative, so hostile nesting cannot overflow the stack.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  const pending: [unknown, unknown][] = [[a, b]];
  while (pending.length > 0) {
    const [x, y] = pending.pop()!;
    if (x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    if (Array.isArray(x) && Array.isArray(y)) {
      if (x.length !== y.length) return false;
      x.forEach((item, i) => pending.push([item, y[i]]));
      continue;
    }
    const xo = x as Record<string, unknown>;
    const yo = y as Record<string, unknown>;
    const keys = Object.keys(xo);
    if (keys.length !== Object.keys(yo).length) return false;
    for (const key of keys) {
      if (!Object.hasOwn(yo, key)) return false;
      pending.push([xo[key], yo[key]]);
    }
  }
  return true;
}

/** A numeric comparison on a value that is present but not a number: neither true nor false. */
const INDETERMINATE = Symbol('indeterminate');

function compare(value: unknown, test: (n: number) => boolean): boolean | typeof INDETERMINATE {
  if (value === MISSING) return false;
  // A schema that does not type the pointer lets "900" or [900] through: answering false would
  // skip a deny rule (fail open), so the caller cannot get past a rule by changing the type.
  return typeof value === 'number' ? test(value) : INDETERMINATE;
}

function holds(condition: PolicyCondition, args: unknown): boolean | typeof INDETERMINATE {
  const value = resolvePointer(args, condition.pointer);
  const bound = condition.value as number;
  switch (condition.op) {
    case 'exists':
      return value !== MISSING;
    case 'missing':
      return value === MISSING;
    case 'eq':
      return value !== MISSING && jsonEqual(value, condition.value);
    case 'ne':
      return value === MISSING || !jsonEqual(value, condition.value);
    case 'in':
      return value !== MISSING && (condition.value as unknown[]).some((v) => jsonEqual(v, value));
    case 'not_in':
      return value === MISSING || !(condition.value as unknown[]).some((v) => jsonEqual(v, value));
    case 'gt':
      return compare(value, (n) => n > bound);
    case 'gte':
      return compare(value, (n) => n >= bound);
    case 'lt':
      return compare(value, (n) => n < bound);
    case 'lte':
      return compare(value, (n) => n <= bound);
  }
}

/** One rule that stopped the call. */
interface PolicyViolation {
  rule: string;
  message: string;
  missingScopes: string[];
  /** The argument a numeric condition could not compare (not a number): the rule was applied as if it held. */
  pointer?: string;
}

/**
 * Evaluates every rule against valid arguments; returns the violations (empty: allowed). A rule
 * whose other conditions hold but whose numeric condition meets a non-number applies, as if that
 * condition held (fail closed), and its violation names the argument.
 */
export function evaluatePolicy(rules: readonly PolicyRule[], args: unknown, scopes: readonly string[]): PolicyViolation[] {
  const violations: PolicyViolation[] = [];
  rules.forEach((rule, i) => {
    const outcomes = rule.when.map((condition) => holds(condition, args));
    if (outcomes.includes(false)) return;
    const unclear = rule.when[outcomes.indexOf(INDETERMINATE)];
    const id = rule.id ?? `rule-${i}`;
    const why = unclear ? { pointer: `/arguments${unclear.pointer}` } : {};
    const notNumber = unclear ? ` (${unclear.pointer} must be a number to compare with "${unclear.op}")` : '';
    if (rule.deny) {
      violations.push({ rule: id, message: `${rule.message ?? `denied by policy rule ${id}`}${notNumber}`, missingScopes: [], ...why });
      return;
    }
    const missing = (rule.require_scopes ?? []).filter((scope) => !scopes.includes(scope));
    if (missing.length > 0) violations.push({ rule: id, message: `${rule.message ?? `policy rule ${id} requires more scopes`}${notNumber}`, missingScopes: missing, ...why });
  });
  return violations;
}
