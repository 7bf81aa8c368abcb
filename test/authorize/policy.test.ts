import { describe, expect, it } from 'vitest';

import { evaluatePolicy, jsonEqual } from '../../src/authorize/policy.js';
import { resolvePointer } from '../../src/json-pointer.js';
import type { PolicyRule } from '../../src/tools/model.js';
import { policyRuleProblems } from '../../src/tools/policy-rule.js';

describe('resolvePointer', () => {
  it('follows RFC 6901 over own properties only', () => {
    const doc = { a: { 'b/c': [10, { '~d': 1 }] } };
    expect(resolvePointer(doc, '/a/b~1c/1/~0d')).toBe(1);
    expect(resolvePointer(doc, '/a/b~1c/5')).not.toBe(undefined);
    expect(resolvePointer({}, '/constructor')).not.toBe(Object);
    expect(resolvePointer({}, '/__proto__')).not.toBe(Object.prototype);
  });
});

describe('evaluatePolicy', () => {
  const rules: PolicyRule[] = [
    { id: 'large-refund', when: [{ pointer: '/amount', op: 'gt', value: 500 }], require_scopes: ['billing:admin'], message: 'refunds above 500 need billing:admin' },
    { id: 'no-root', when: [{ pointer: '/account', op: 'in', value: ['root', 'admin'] }], deny: true },
  ];

  it('allows what no rule matches', () => {
    expect(evaluatePolicy(rules, { amount: 20, account: 'alice' }, [])).toEqual([]);
  });

  it('requires the rule\'s scopes when its conditions hold', () => {
    expect(evaluatePolicy(rules, { amount: 900 }, ['billing:read'])).toEqual([
      { rule: 'large-refund', message: 'refunds above 500 need billing:admin', missingScopes: ['billing:admin'] },
    ]);
    expect(evaluatePolicy(rules, { amount: 900 }, ['billing:admin'])).toEqual([]);
  });

  it('denies outright with a deny rule', () => {
    expect(evaluatePolicy(rules, { account: 'root' }, ['billing:admin'])[0]).toMatchObject({ rule: 'no-root', missingScopes: [] });
  });

  it.each([
    ['eq', 'x', { v: 'x' }, true],
    ['ne', 'x', { v: 'y' }, true],
    ['ne', 'x', {}, true],
    ['gte', 5, { v: 5 }, true],
    // A numeric op on a non-number applies (fail closed, issue 32 finding 7): a rule cannot be sidestepped by the type.
    ['lt', 5, { v: '4' }, true],
    ['gt', 5, { v: [9] }, true],
    ['gte', 5, {}, false],
    ['lte', 5, { v: 5 }, true],
    ['not_in', [1, 2], { v: 3 }, true],
    ['exists', undefined, { v: null }, true],
    ['missing', undefined, { v: 1 }, false],
  ] as const)('op %s with %j on %j -> %s', (op, value, args, applies) => {
    const rule: PolicyRule = { when: [{ pointer: '/v', op, ...(value === undefined ? {} : { value }) }], deny: true };
    expect(evaluatePolicy([rule], args, []).length === 1).toBe(applies);
  });
});

describe('policyRuleProblems', () => {
  it('needs exactly one effect and values that fit the operator', () => {
    expect(policyRuleProblems({ when: [{ pointer: '/a', op: 'gt', value: 'x' }] }, '/policy/0').map((p) => p.pointer)).toEqual([
      '/policy/0',
      '/policy/0/when/0/value',
    ]);
    expect(policyRuleProblems({ when: [{ pointer: '/a', op: 'in', value: 3 }], deny: true }, '/p')).toHaveLength(1);
    expect(policyRuleProblems({ when: [{ pointer: '/a', op: 'exists' }], deny: true }, '/p')).toEqual([]);
  });
});

describe('jsonEqual', () => {
  it('compares objects by keys and values whatever their order, arrays by position', () => {
    expect(jsonEqual({ type: 'user', id: 'root' }, { id: 'root', type: 'user' })).toBe(true);
    expect(jsonEqual({ a: [1, { b: 2, c: 3 }] }, { a: [1, { c: 3, b: 2 }] })).toBe(true);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
    expect(jsonEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(jsonEqual({ a: undefined }, { b: undefined })).toBe(false);
    expect(jsonEqual([], {})).toBe(false);
    expect(jsonEqual(null, {})).toBe(false);
    expect(jsonEqual('1', 1)).toBe(false);
  });

  it('survives hostile nesting', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i += 1) deep = [deep];
    expect(jsonEqual(deep, deep)).toBe(true);
  });
});
