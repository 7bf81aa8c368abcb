import { MISSING, resolvePointer } from '../json-pointer.js';
import type { PolicyCondition, PolicyRule } from '../tools/policy-rule.js';

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

function holds(condition: PolicyCondition, args: unknown): boolean {
  const value = resolvePointer(args, condition.pointer);
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
      return typeof value === 'number' && value > (condition.value as number);
    case 'gte':
      return typeof value === 'number' && value >= (condition.value as number);
    case 'lt':
      return typeof value === 'number' && value < (condition.value as number);
    case 'lte':
      return typeof value === 'number' && value <= (condition.value as number);
  }
}

/** One rule that stopped the call. */
export interface PolicyViolation {
  rule: string;
  message: string;
  missingScopes: string[];
}

/** Evaluates every rule against valid arguments; returns the violations (empty: allowed). */
export function evaluatePolicy(rules: readonly PolicyRule[], args: unknown, scopes: readonly string[]): PolicyViolation[] {
  const violations: PolicyViolation[] = [];
  rules.forEach((rule, i) => {
    if (!rule.when.every((condition) => holds(condition, args))) return;
    const id = rule.id ?? `rule-${i}`;
    if (rule.deny) {
      violations.push({ rule: id, message: rule.message ?? `denied by policy rule ${id}`, missingScopes: [] });
      return;
    }
    const missing = (rule.require_scopes ?? []).filter((scope) => !scopes.includes(scope));
    if (missing.length > 0) violations.push({ rule: id, message: rule.message ?? `policy rule ${id} requires more scopes`, missingScopes: missing });
  });
  return violations;
}
