import { describe, expect, it } from 'vitest';

import { linearRegExp, MAX_PATTERN_INPUT, patternProblem } from '../../src/tools/linear-pattern.js';

/** What Ajv's default engine would answer: the ECMAScript meaning the registry must keep. */
const ecma = (pattern: string, input: string) => new RegExp(pattern, 'u').test(input);

describe('linearRegExp (RE2 for publisher patterns)', () => {
  it('means what ECMAScript means for common patterns: anchors, \\d, \\w, \\s, ., classes, unicode', () => {
    const cases: [string, string[]][] = [
      ['^[a-z0-9_-]{3,32}$', ['abc', 'ab', 'a_b-c', 'ABC', 'abc\n']],
      ['^\\d{3}-\\d{4}$', ['555-1234', '٥٥٥-١٢٣٤', '555-12345']],
      ['^\\w+$', ['hello_1', 'héllo', '']],
      ['^\\s+$', [' \t', '\u00a0', '\u2028', '\ufeff', 'x']],
      ['^\\S+$', ['abc', 'a b', 'a\u00a0b']],
      ['^[\\s,]+$', [' , ', '\u3000', 'x']],
      ['^.$', ['a', '\n', '\r', '\u2028', '😀', 'é']],
      ['abc$', ['xabc', 'abc\n']],
      ['^abc', ['abcx', 'xabc', '\nabc']],
      ['^\\u00e9\\u{1F600}$', ['é😀', 'e😀']],
      ['^\\p{L}+$', ['héllo', 'Ωμέγα', 'a1']],
      ['^\\p{Lu}', ['Élan', 'élan']],
      ['^[😀-😂]$', ['😁', '😃']],
      ['^(?<year>\\d{4})-(?:0[1-9]|1[0-2])$', ['2024-01', '2024-13']],
      ['^\\bfoo\\b', ['foo bar', 'foobar']],
      ['^[^]$', ['x', '\n']],
      ['^[]$', ['', 'x']],
      ['^\\/api\\/v\\d+$', ['/api/v2', 'api/v2']],
      ['^\\+?[0-9 ()-]{7,20}$', ['+1 (555) 123-4567', '12']],
      ['^([a-z]+,)*[a-z]+$', ['a,b,c', 'a,,b']],
      ['^(foo|bar)$', ['foo', 'foobar']],
      ['colou?r', ['my color', 'colour', 'colr']],
      ['^[A-Z]{2}[0-9]{2}[A-Z0-9]{1,30}$', ['DE89370400440532013000', 'de89']],
    ];
    for (const [pattern, inputs] of cases) {
      expect(patternProblem(pattern), pattern).toBeUndefined();
      const compiled = linearRegExp(pattern);
      for (const input of inputs) expect(compiled.test(input), `${pattern} on ${JSON.stringify(input)}`).toBe(ecma(pattern, input));
    }
  });

  it('matches the patterns that made the backtracking engine hang in linear time', () => {
    // These ran for seconds to centuries on ECMAScript's engine; RE2 answers at once. No timing is
    // asserted (tests stay deterministic): a backtracking engine would not finish the loop at all.
    for (const [pattern, input] of [
      ['^.*.*.*.*x$', 'a'.repeat(MAX_PATTERN_INPUT)],
      ['^(a+)+$', `${'a'.repeat(MAX_PATTERN_INPUT - 1)}b`],
      ['^(a|aa)+$', `${'a'.repeat(MAX_PATTERN_INPUT - 1)}b`],
      ['^(\\w+\\s?)*$', `${'word '.repeat(1_999)}!`],
    ]) {
      expect(patternProblem(pattern!), pattern).toBeUndefined();
      expect(linearRegExp(pattern!).test(input!), pattern).toBe(false);
    }
    expect(linearRegExp('^(a+)+$').test('a'.repeat(500))).toBe(true);
  });

  it('refuses what RE2 cannot express, and what ECMAScript would not compile, with the reason', () => {
    for (const pattern of ['(a)\\1', '^(?!\\.)[a-z.]+$', '^(?=.*\\d).{8,}$', '(?<=\\$)\\d+', '(?<!x)y', '^(?<q>a)\\k<q>$', '^.{0,5000}$']) {
      expect(patternProblem(pattern), pattern).toMatch(/cannot be matched in linear time/);
      expect(() => linearRegExp(pattern), pattern).toThrow(/linear time/);
    }
    for (const pattern of ['^\\-$', '(', 'x{,3}', '\\k<a>']) expect(patternProblem(pattern), pattern).toMatch(/not a valid ECMAScript/);
    expect(patternProblem('a'.repeat(513))).toMatch(/longer than 512/);
  });

  it('fails a string longer than the input bound instead of scanning it', () => {
    const any = linearRegExp('^[a-z]*$');
    expect(any.test('a'.repeat(MAX_PATTERN_INPUT))).toBe(true);
    expect(any.test('a'.repeat(MAX_PATTERN_INPUT + 1))).toBe(false);
  });
});
