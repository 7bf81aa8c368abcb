import { RE2JS } from 're2js';

/**
 * Publisher-supplied regular expressions (`pattern`, `patternProperties`) run on every call's
 * arguments in /v1/authorize, in the event loop, and JavaScript cannot interrupt a running match:
 * a backtracking engine lets one pattern (`^.*.*.*.*x$` on 600 characters: 37 s) stall the whole
 * replica. They are matched by RE2 (re2js, pure JavaScript), whose time is linear in the input
 * whatever the pattern. Patterns RE2 cannot express (backreferences, lookaround) are refused.
 */

/** Longest pattern accepted. */
const MAX_PATTERN_LENGTH = 512;
/** Longest string a pattern is run on; a longer one fails the pattern (fail closed). */
export const MAX_PATTERN_INPUT = 10_000;

// ECMAScript's \s (WhiteSpace and LineTerminator) spelled for RE2, whose \s is ASCII only.
const JS_SPACE = '\\t\\n\\x0B\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}';
// ECMAScript's `.` without the s flag stops at every line terminator; RE2's only at \n.
const JS_DOT = '[^\\n\\r\\x{2028}\\x{2029}]';

/**
 * An ECMAScript pattern (JSON Schema patterns are ECMA-262, compiled with the u flag) in RE2
 * syntax, where their meanings differ for common patterns: `\s`/`\S` and `.` are spelled out;
 * `\d`, `\w`, `\b`, anchors (no m flag: `$` is the end of input in both), classes, `\uXXXX`,
 * `\u{...}`, `\p{...}` and named groups mean the same (re2js translates the spellings). One gap
 * left: `\S` inside a class (`[\S]`) keeps RE2's ASCII meaning.
 */
function toRe2(pattern: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      i += 1;
      // re2js would read `\k<name>` as the text "k<name>": refuse every backreference here.
      if (!inClass && /[1-9k]/.test(next)) throw new Error(`backreference \\${next} is not supported`);
      if (next === 's') out += inClass ? JS_SPACE : `[${JS_SPACE}]`;
      else if (next === 'S' && !inClass) out += `[^${JS_SPACE}]`;
      else out += `\\${next}`;
    } else if (c === '[' && !inClass) {
      const negated = pattern.startsWith('^', i + 1);
      const start = i + (negated ? 2 : 1);
      // `[]` and `[^]` are the empty and the full class in ECMAScript; in RE2 a leading `]` is a literal.
      if (pattern[start] === ']') {
        out += negated ? '[\\x00-\\x{10FFFF}]' : '[^\\x00-\\x{10FFFF}]';
        i = start;
        continue;
      }
      inClass = true;
      out += negated ? '[^' : '[';
      i = start - 1;
    } else if (c === ']' && inClass) {
      inClass = false;
      out += c;
    } else if (c === '.' && !inClass) {
      out += JS_DOT;
    } else {
      out += c;
    }
  }
  return RE2JS.translateRegExp(out);
}

/** A compiled pattern, or why it is refused. */
function compile(pattern: string): RE2JS | string {
  if (pattern.length > MAX_PATTERN_LENGTH) return `pattern is longer than ${MAX_PATTERN_LENGTH} characters`;
  try {
    // Only to hold the pattern to ECMAScript's grammar (compiling runs nothing).
    new RegExp(pattern, 'u');
  } catch (error) {
    return `pattern is not a valid ECMAScript regular expression: ${(error as Error).message}`;
  }
  try {
    return RE2JS.compile(toRe2(pattern));
  } catch (error) {
    return `pattern cannot be matched in linear time (backreferences, lookahead, lookbehind and repeat counts over 1000 are not supported): ${(error as Error).message}`;
  }
}

/** Why a pattern is refused, or undefined when it may be registered. */
export function patternProblem(pattern: string): string | undefined {
  const compiled = compile(pattern);
  return typeof compiled === 'string' ? compiled : undefined;
}

/** A compiled pattern Ajv can call `.test()` on: linear time, never on strings over MAX_PATTERN_INPUT. */
interface LinearPattern {
  test(input: string): boolean;
  toString(): string;
}

/**
 * Ajv's `code.regExp` engine for publisher schemas: a pattern RE2 cannot express does not compile
 * (so a schema stored before this check fails to compile, and authorize denies), and the input
 * length is bounded.
 */
export function linearRegExp(pattern: string): LinearPattern {
  const compiled = compile(pattern);
  if (typeof compiled === 'string') throw new Error(`${compiled}: ${JSON.stringify(pattern.slice(0, 80))}`);
  return {
    test: (input) => input.length <= MAX_PATTERN_INPUT && compiled.test(input),
    // Ajv deduplicates compiled patterns by this key.
    toString: () => `/${pattern}/u`,
  };
}
linearRegExp.code = 'linearRegExp';
