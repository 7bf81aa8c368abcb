import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { canonicalJson } from '../../src/tools/canonical-json.js';
import { contentHash } from '../../src/tools/content-hash.js';

describe('canonicalJson / contentHash', () => {
  it('ignores object key order at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe('{"a":{"c":null,"d":[1,{"x":1,"y":2}]},"b":1}');
    expect(contentHash({ a: 1, b: 2 })).toBe(contentHash({ b: 2, a: 1 }));
  });

  it('keeps array order significant', () => {
    expect(contentHash({ tags: ['a', 'b'] })).not.toBe(contentHash({ tags: ['b', 'a'] }));
  });

  it('is a hex SHA-256', () => {
    expect(contentHash({})).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is stable under key shuffling (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })), (object) => {
        const reversed = Object.fromEntries(Object.entries(object).reverse());
        expect(contentHash(reversed)).toBe(contentHash(object));
        expect(JSON.parse(canonicalJson(object))).toEqual(JSON.parse(JSON.stringify(object)));
      }),
    );
  });
});
