import { type Static, Type } from 'typebox';

/**
 * Argument-level rules that scopes cannot express ("refunds above 500 need billing:admin").
 * Deliberately tiny: conditions on JSON pointers into the call's arguments, all of which must
 * hold, and one effect. No expressions, no regular expressions, nothing Turing-complete.
 */
const Condition = Type.Object(
  {
    pointer: Type.String({ pattern: '^(/[^/]*)*$', maxLength: 256, description: 'JSON pointer into the arguments' }),
    op: Type.Enum(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in', 'exists', 'missing']),
    value: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

export const PolicyRuleSchema = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    when: Type.Array(Condition, { minItems: 1, maxItems: 8, description: 'every condition must hold for the rule to apply' }),
    require_scopes: Type.Optional(Type.Array(Type.String({ pattern: '^[\\x21-\\x7E]{1,128}$' }), { minItems: 1, maxItems: 16 })),
    deny: Type.Optional(Type.Literal(true)),
    message: Type.Optional(Type.String({ maxLength: 300 })),
  },
  { additionalProperties: false },
);

export type PolicyRule = Static<typeof PolicyRuleSchema>;
export type PolicyCondition = PolicyRule['when'][number];

/** Why a rule is malformed beyond its shape (checked at registration), as pointer + message. */
export function policyRuleProblems(rule: PolicyRule, pointer: string): { pointer: string; message: string }[] {
  const problems: { pointer: string; message: string }[] = [];
  if ((rule.deny === true) === (rule.require_scopes !== undefined)) {
    problems.push({ pointer, message: 'a rule needs exactly one effect: "deny": true or "require_scopes"' });
  }
  rule.when.forEach((condition, i) => {
    const needsValue = !['exists', 'missing'].includes(condition.op);
    if (needsValue && condition.value === undefined) problems.push({ pointer: `${pointer}/when/${i}/value`, message: `op "${condition.op}" needs a value` });
    if (['in', 'not_in'].includes(condition.op) && !Array.isArray(condition.value)) {
      problems.push({ pointer: `${pointer}/when/${i}/value`, message: `op "${condition.op}" needs an array` });
    }
    if (['gt', 'gte', 'lt', 'lte'].includes(condition.op) && typeof condition.value !== 'number') {
      problems.push({ pointer: `${pointer}/when/${i}/value`, message: `op "${condition.op}" needs a number` });
    }
  });
  return problems;
}

const MISSING = Symbol('missing');

/** RFC 6901 lookup over own properties only (no prototype chain). */
export function resolvePointer(document: unknown, pointer: string): unknown {
  if (pointer === '') return document;
  let current: unknown = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current) && /^(0|[1-9]\d*)$/.test(token) && Number(token) < current.length) current = current[Number(token)];
    else if (typeof current === 'object' && current !== null && !Array.isArray(current) && Object.hasOwn(current, token)) {
      current = (current as Record<string, unknown>)[token];
    } else return MISSING;
  }
  return current;
}

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
