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
