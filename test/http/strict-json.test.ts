import { describe, expect, it } from 'vitest';

import { ambiguity, exactNumber } from '../../src/http/strict-json.js';

describe('exactNumber', () => {
  it('accepts integers and ordinary decimals, however they are written', () => {
    for (const n of ['0', '-0', '40', '40.5', '19.99', '0.1', '0.10', '1.0', '1e3', '1E+3', '2.5e-7', '9007199254740991', '1e21']) expect(exactNumber(n), n).toBe(true);
  });

  it('reads a number literal as long as a body in one pass (trailing zeros stripped without backtracking)', () => {
    expect(exactNumber(`1.${'0'.repeat(200_000)}1`)).toBe(false);
    expect(exactNumber(`1${'0'.repeat(400)}.${'0'.repeat(200_000)}`)).toBe(false);
    expect(exactNumber(`4.${'0'.repeat(200_000)}`)).toBe(true);
  });

  it('refuses numbers JSON.parse rounds, underflows or overflows', () => {
    for (const n of ['500.00000000000001', '-1e-400', '1e400', '-1e400', '9007199254740993', '12345678901234567890', '0.1000000000000000000001']) {
      expect(exactNumber(n), n).toBe(false);
    }
  });
});

describe('ambiguity', () => {
  it('points at the first duplicate key or inexact number, inside strings never', () => {
    expect(ambiguity('{"a":{"b":1,"b":2}}', false)).toMatchObject({ pointer: '/a/b' });
    expect(ambiguity('{"a":[1,2,1e400]}', true)).toMatchObject({ pointer: '/a/2' });
    expect(ambiguity('{"a":[1,2,1e400]}', false)).toBeUndefined();
    expect(ambiguity('{"s":"1e400","t":"\\"x\\"","k~/":500.00000000000001}', true)).toMatchObject({ pointer: '/k~0~1' });
    expect(ambiguity('1e400', true)).toMatchObject({ pointer: '' });
    expect(ambiguity('{"a":[0.5,-2,{"b":3e2}]}', true)).toBeUndefined();
  });
});
