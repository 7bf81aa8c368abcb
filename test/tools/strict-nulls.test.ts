import { describe, expect, it } from 'vitest';

import { dropAbsentNulls } from '../../src/tools/strict-nulls.js';

const parameters = {
  type: 'object',
  $defs: { line: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer' } }, required: ['sku'] } },
  properties: {
    invoice_id: { type: 'string' },
    note: { type: 'string' },
    memo: { type: ['string', 'null'] },
    anything: { description: 'any JSON value' },
    address: { type: 'object', properties: { city: { type: 'string' }, zip: { type: 'string' } }, required: ['city'] },
    lines: { type: 'array', items: { $ref: '#/$defs/line' } },
    mode: { enum: ['fast', 'slow'] },
  },
  required: ['invoice_id'],
};

describe('dropAbsentNulls', () => {
  it('drops a null for an optional property the schema refuses null for, at any depth', () => {
    const args = { invoice_id: 'inv_1', note: null, mode: null, address: { city: 'Oslo', zip: null }, lines: [{ sku: 'a', qty: null }] };
    const before = structuredClone(args);
    expect(dropAbsentNulls(parameters, args)).toEqual({
      arguments: { invoice_id: 'inv_1', address: { city: 'Oslo' }, lines: [{ sku: 'a' }] },
      dropped: ['/note', '/mode', '/address/zip', '/lines/0/qty'],
    });
    expect(args).toEqual(before);
  });

  it('never drops a null the original schema may accept, nor one for a required property', () => {
    const args = { invoice_id: null, memo: null, anything: null, address: { city: null } };
    const result = dropAbsentNulls(parameters, args);
    expect(result.dropped).toEqual([]);
    expect(result.arguments).toBe(args);
  });

  it('leaves undeclared keys and calls without nulls alone', () => {
    const args = { invoice_id: 'inv_1', extra: null };
    expect(dropAbsentNulls(parameters, args)).toEqual({ arguments: args, dropped: [] });
  });

  it('reads allOf parts together and anyOf branches each', () => {
    const allOf = { allOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { properties: { b: { type: 'string' } }, required: ['b'] }] };
    expect(dropAbsentNulls(allOf, { a: null, b: null }).dropped).toEqual(['/a']);
    // One branch accepts a null for `a`: it stays.
    const anyOf = { anyOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'object', properties: { a: { type: 'null' } } }] };
    expect(dropAbsentNulls(anyOf, { a: null }).dropped).toEqual([]);
    const both = { anyOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'object', properties: { a: { type: 'integer' } }, additionalProperties: false }] };
    expect(dropAbsentNulls(both, { a: null }).dropped).toEqual(['/a']);
    // A branch open to any key could take the null: it stays.
    const open = { anyOf: [{ type: 'object', properties: { a: { type: 'string' } } }, { type: 'object', properties: { b: { type: 'string' } } }] };
    expect(dropAbsentNulls(open, { a: null }).dropped).toEqual([]);
  });

  it('follows a recursive $ref without looping', () => {
    const tree = { type: 'object', properties: { name: { type: 'string' }, child: { $ref: '#' } } };
    expect(dropAbsentNulls(tree, { name: 'a', child: { name: null, child: { child: null } } })).toEqual({
      arguments: { name: 'a', child: { child: {} } },
      dropped: ['/child/name', '/child/child/child'],
    });
  });
});
