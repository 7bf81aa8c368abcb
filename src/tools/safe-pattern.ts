import safeRegex from 'safe-regex2';

/**
 * Publisher-supplied regular expressions (`pattern`, `patternProperties`) run on every call's
 * arguments in /v1/authorize, in the event loop: one catastrophic pattern would stall the whole
 * replica. JavaScript cannot interrupt a running match, so patterns are vetted at registration and
 * the input they run on is bounded at validation.
 */

/** Longest pattern accepted. */
export const MAX_PATTERN_LENGTH = 512;
/** Longest string a pattern is run on; a longer one fails the pattern (fail closed). */
export const MAX_PATTERN_INPUT = 10_000;

const QUANTIFIER = /^(?:[*+]|\{\d+,\d*\})/;
const ATOM = /^(?:\[(?:\\.|[^\]\\])*\]|\\.|[^()|\\[\]*+?{}^$])/;

/**
 * Whether a repeated group's body is a "separated" repetition such as `([a-z0-9-]*\.)+` (the shape
 * of zod's email pattern): no groups or alternation inside, ends with one literal that none of the
 * body's quantified atoms can match. Each iteration then ends at a distinct separator, so the
 * repetition cannot be split two ways and does not backtrack exponentially.
 */
function separatedBody(body: string): boolean {
  const atoms: { text: string; quantified: boolean }[] = [];
  for (let rest = body; rest.length > 0; ) {
    const atom = ATOM.exec(rest)?.[0];
    if (!atom) return false;
    rest = rest.slice(atom.length);
    const quantifier = QUANTIFIER.exec(rest)?.[0] ?? (rest.startsWith('?') ? '?' : '');
    rest = rest.slice(quantifier.length);
    atoms.push({ text: atom, quantified: quantifier !== '' });
  }
  const last = atoms.at(-1);
  if (!last || last.quantified) return false;
  // The separator must be one literal character (`\.`, `,`), not a class or an escape like `\w`.
  const separator = last.text.startsWith('\\') ? last.text.slice(1) : last.text;
  if (separator.length !== 1 || (last.text.startsWith('\\') && /[a-zA-Z0-9]/.test(separator))) return false;
  return atoms.every((atom) => !atom.quantified || !new RegExp(`^${atom.text}$`, 'u').test(separator));
}

/**
 * Whether a repeated group (`(...)*`, `(...)+`, `(...){n,}`) could backtrack catastrophically: it
 * holds an alternation (`(a|aa)+`, which safe-regex2's star-height test does not see), a nested
 * group, or a quantifier, unless it is a separated repetition (see `separatedBody`).
 * Returns 'unsafe', 'separated' (repetitions are all separated) or 'plain'.
 */
function repetitions(pattern: string): 'unsafe' | 'separated' | 'plain' {
  const groups: { start: number; alternation: boolean; nested: boolean }[] = [];
  let separated = false;
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i];
    if (c === '\\') {
      i += 1;
    } else if (c === '[') {
      for (i += 1; i < pattern.length && pattern[i] !== ']'; i += 1) if (pattern[i] === '\\') i += 1;
    } else if (c === '(') {
      const parent = groups.at(-1);
      if (parent) parent.nested = true;
      groups.push({ start: i, alternation: false, nested: false });
    } else if (c === '|') {
      const top = groups.at(-1);
      if (top) top.alternation = true;
    } else if (c === ')') {
      const group = groups.pop();
      if (!group) continue;
      const parent = groups.at(-1);
      if (parent && group.alternation) parent.alternation = true;
      const next = pattern.slice(i + 1);
      const repeated = next.startsWith('*') || next.startsWith('+') || (/^\{\d+(,\d*)?\}/.test(next) && !/^\{[01](,[01]?)?\}/.test(next));
      if (!repeated) continue;
      const body = pattern.slice(group.start + 1, i).replace(/^\?:/, '');
      if (group.alternation || group.nested) return 'unsafe';
      if (/[*+{]/.test(body.replace(/\[(?:\\.|[^\]\\])*\]|\\./g, ''))) {
        if (!separatedBody(body)) return 'unsafe';
        separated = true;
      }
    }
  }
  return separated ? 'separated' : 'plain';
}

/** Why a pattern is refused, or undefined when it may be registered. */
export function unsafePattern(pattern: string): string | undefined {
  if (pattern.length > MAX_PATTERN_LENGTH) return `pattern is longer than ${MAX_PATTERN_LENGTH} characters`;
  const shape = repetitions(pattern);
  // safe-regex2 flags every nested quantifier (star height > 1), separated repetitions included.
  if (shape === 'unsafe' || (shape === 'plain' && !safeRegex(pattern, { limit: 25 }))) {
    return 'pattern is unsafe: nested or alternating repetition can backtrack catastrophically; use a character class or bound the repetition';
  }
  return undefined;
}

/** A compiled pattern Ajv can call `.test()` on: never runs on strings over MAX_PATTERN_INPUT. */
interface BoundedPattern {
  test(input: string): boolean;
  toString(): string;
}

/**
 * Ajv's `code.regExp` engine for publisher schemas: refuses unsafe patterns (so a schema stored
 * before this check fails to compile, and authorize denies) and bounds the input length.
 */
export function boundedRegExp(pattern: string, flags: string): BoundedPattern {
  const problem = unsafePattern(pattern);
  if (problem) throw new Error(`${problem}: ${JSON.stringify(pattern.slice(0, 80))}`);
  const regExp = new RegExp(pattern, flags);
  return {
    test: (input) => input.length <= MAX_PATTERN_INPUT && regExp.test(input),
    // Ajv deduplicates compiled patterns by this key.
    toString: () => regExp.toString(),
  };
}
boundedRegExp.code = 'boundedRegExp';
