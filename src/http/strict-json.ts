import type { FastifyInstance } from 'fastify';

import { AppError } from '../errors.js';
import { escapePointer } from '../json-pointer.js';

interface Frame {
  parent: Frame | undefined;
  /** Keys seen so far (objects), or undefined for an array. */
  keys: Set<string> | undefined;
  expectKey: boolean;
  key: string;
  index: number;
}

/** Where a JSON text means different things to different parsers. */
interface AmbiguousJson {
  pointer: string;
  message: string;
}

const pointerOf = (frame: Frame | undefined, last?: string): string => {
  const tokens: string[] = last === undefined ? [] : [last];
  for (let f = frame; f?.parent; f = f.parent) tokens.push(f.parent.keys ? f.parent.key : String(f.parent.index));
  return tokens.reverse().map((t) => `/${escapePointer(t)}`).join('');
};

const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const PARTS = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** A JSON number's exact decimal value as sign, significant digits and exponent ("0" for zero). */
function decimalOf(literal: string): string {
  const [, sign, int, frac = '', exp = '0'] = PARTS.exec(literal)!;
  let digits = `${int}${frac}`.replace(/^0+/, '');
  if (digits === '') return '0';
  let exponent = BigInt(exp) - BigInt(frac.length);
  const trimmed = withoutTrailingZeros(digits);
  exponent += BigInt(digits.length - trimmed.length);
  digits = trimmed;
  return `${sign}${digits}e${exponent}`;
}

/** `digits` without its trailing zeros, by a loop: /0+$/ retries from every position, quadratic on a long literal (seconds at 256 KiB). */
function withoutTrailingZeros(digits: string): string {
  let end = digits.length;
  while (end > 0 && digits.charCodeAt(end - 1) === 48 /* '0' */) end--;
  return digits.slice(0, end);
}

/**
 * Whether JSON.parse reads this number literal as exactly the value it denotes, up to the
 * shortest decimal that round-trips: 40.5, 19.99 and 1e3 do; 500.00000000000001 (read as 500),
 * -1e-400 (-0), 1e400 (Infinity) and 9007199254740993 do not. A gateway parsing with another
 * library (big decimals, or keeping every digit) would see another number than the one checked.
 */
export function exactNumber(literal: string): boolean {
  const value = Number(literal);
  return Number.isFinite(value) && decimalOf(literal) === decimalOf(String(value).replace('e+', 'e'));
}

/**
 * The first place where `text` (which must be valid JSON) is ambiguous: a repeated key in an
 * object (keys compared after unescaping; JSON.parse keeps the last of duplicates while other
 * parsers, a gateway or a reviewer's tool, may keep the first) or, with `exactNumbers`, a number
 * that does not survive parsing exactly. Linear and iterative: safe on hostile nesting.
 */
export function ambiguity(text: string, exactNumbers: boolean): AmbiguousJson | undefined {
  let top: Frame | undefined;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (top?.keys && top.expectKey) {
        const raw = text.slice(i, j + 1);
        const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        if (top.keys.has(key)) return { pointer: pointerOf(top, key), message: 'duplicate key: object keys must be unique' };
        top.keys.add(key);
        top.key = key;
        top.expectKey = false;
      }
      i = j;
    } else if (c === '{' || c === '[') {
      top = { parent: top, keys: c === '{' ? new Set() : undefined, expectKey: c === '{', key: '', index: 0 };
    } else if (c === '}' || c === ']') {
      top = top?.parent;
    } else if (c === ',' && top) {
      if (top.keys) top.expectKey = true;
      else top.index += 1;
    } else if (exactNumbers && (c === '-' || (c >= '0' && c <= '9'))) {
      NUMBER.lastIndex = i;
      const literal = NUMBER.exec(text)![0];
      if (!exactNumber(literal)) {
        const shown = literal.length > 40 ? `${literal.slice(0, 40)}…` : literal;
        return {
          pointer: top ? pointerOf(top, top.keys ? top.key : String(top.index)) : '',
          message: `number ${shown} cannot be represented exactly (it would be read as ${Number(literal)}); send fewer digits, or a string`,
        };
      }
      i += literal.length - 1;
    }
  }
  return undefined;
}

// Fatal: Fastify's own string decoding would turn invalid bytes into U+FFFD silently, so the check
// would read "root\uFFFD" where a gateway parsing the raw bytes leniently may read "root".
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Replaces the JSON parser of the routes in `app`'s scope with Fastify's own (prototype
 * poisoning still an error) plus a check that the body means one thing to every parser: bytes
 * that are not UTF-8, duplicate keys, and with `exactNumbers` numbers JSON.parse would round, are
 * a 400 with the pointer.
 */
export function rejectDuplicateKeys(app: FastifyInstance, options: { exactNumbers?: boolean } = {}): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, raw, done) => {
    let body: string;
    try {
      body = utf8.decode(raw as Buffer);
    } catch {
      return done(new AppError('validation_failed', 'request body is invalid', [{ pointer: '', message: 'must be valid UTF-8', in: 'body' }]), undefined);
    }
    parse(request, body, (error, value) => {
      if (error) return done(error, undefined);
      const problem = ambiguity(body, options.exactNumbers ?? false);
      if (problem === undefined) return done(null, value);
      done(new AppError('validation_failed', 'request body is invalid', [{ ...problem, in: 'body' }]), undefined);
    });
  });
}
