import type { FastifyInstance } from 'fastify';

import { AppError } from '../errors.js';
import { escapePointer } from '../tools/json-schema.js';

interface Frame {
  parent: Frame | undefined;
  /** Keys seen so far (objects), or undefined for an array. */
  keys: Set<string> | undefined;
  expectKey: boolean;
  key: string;
  index: number;
}

const pointerOf = (frame: Frame | undefined, last?: string): string => {
  const tokens: string[] = last === undefined ? [] : [last];
  for (let f = frame; f?.parent; f = f.parent) tokens.push(f.parent.keys ? f.parent.key : String(f.parent.index));
  return tokens.reverse().map((t) => `/${escapePointer(t)}`).join('');
};

/**
 * The JSON pointer of the first repeated key in an object of `text` (which must be valid JSON),
 * keys compared after unescaping. JSON.parse keeps the last of duplicates while other parsers
 * (a gateway, a reviewer's tool) may keep the first: a tool document must mean one thing.
 * Linear and iterative: safe on hostile nesting.
 */
export function duplicateKey(text: string): string | undefined {
  let top: Frame | undefined;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (top?.keys && top.expectKey) {
        const raw = text.slice(i, j + 1);
        const key = raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        if (top.keys.has(key)) return pointerOf(top, key);
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
    }
  }
  return undefined;
}

/**
 * Replaces the JSON parser of the routes in `app`'s scope with Fastify's own (prototype
 * poisoning still an error) plus a duplicate-key check answering 400 with the key's pointer.
 */
export function rejectDuplicateKeys(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    parse(request, body as string, (error, value) => {
      if (error) return done(error, undefined);
      const pointer = duplicateKey(body as string);
      if (pointer === undefined) return done(null, value);
      done(new AppError('validation_failed', 'request body is invalid', [{ pointer, message: 'duplicate key: object keys must be unique', in: 'body' }]), undefined);
    });
  });
}
