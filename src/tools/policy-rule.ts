import type { PolicyRule } from './model.js';

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
