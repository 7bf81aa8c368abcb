import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { escapePointer } from '../../src/json-pointer.js';
import { compileSchema, metaValidate } from '../../src/tools/json-schema.js';
import { deriveSummary } from '../../src/tools/normalize.js';
import { exceedsDepth, ToolValidator } from '../../src/tools/validation.js';
import { toolDocument } from '../helpers/fixtures.js';

const limits = { descriptionLength: 1024, summaryLength: 200, schemaDepth: 32 };

describe('ToolValidator', () => {
  const validator = new ToolValidator(limits);

  it('check: the publish input check every door shares, a 400 naming every field (and the path name a PUT addresses)', () => {
    expect(validator.check(toolDocument({ name: 'ok_tool' }), 'ok_tool').name).toBe('ok_tool');
    const refusal = (input: unknown, pathName?: string) => {
      try {
        validator.check(input, pathName);
      } catch (error) {
        return error;
      }
      throw new Error('accepted');
    };
    expect(refusal({ name: 'x', version: 'one', parameters: { type: 'object' } })).toMatchObject({
      code: 'validation_failed',
      details: expect.arrayContaining([{ pointer: '/description', message: expect.any(String), in: 'body' }, { pointer: '/version', message: expect.any(String), in: 'body' }]),
    });
    expect(refusal(toolDocument({ name: 'ok_tool' }), 'other_tool')).toMatchObject({ code: 'validation_failed', details: [{ pointer: '/name', in: 'body' }] });
  });

  it('normalizes a valid document: defaults, trimmed text, sorted unique scopes, extensions apart', () => {
    const result = validator.validate({
      name: 'minimal',
      version: '0.1.0',
      description: '  Does one thing. Then another.  ',
      required_scopes: ['b:read', 'a:read', 'b:read'],
      parameters: { type: 'object' },
      'x-team': 'core',
    });
    expect(result).toEqual({
      ok: true,
      document: {
        name: 'minimal',
        version: '0.1.0',
        description: 'Does one thing. Then another.',
        summary: 'Does one thing.',
        not_for: null,
        aliases: [],
        examples: [],
        tags: [],
        category: null,
        required_scopes: ['a:read', 'b:read'],
        sensitivity: 'low',
        side_effects: false,
        parameters: { type: 'object' },
        returns: null,
        policy: [],
        extensions: { 'x-team': 'core' },
      },
    });
  });

  it('accepts the fixture document', () => {
    expect(validator.validate(toolDocument()).ok).toBe(true);
  });

  it('rejects non-objects at the root', () => {
    for (const input of [null, 'tool', 42, [toolDocument()]]) {
      expect(validator.validate(input)).toEqual({ ok: false, issues: [{ pointer: '/', message: 'must be a JSON object' }] });
    }
  });

  it('reports missing required fields by pointer', () => {
    const result = validator.validate({});
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues.map((i) => i.pointer).sort()).toEqual(['/description', '/name', '/parameters', '/version']);
  });

  it('escapes JSON pointer tokens in property names', () => {
    const result = validator.validate(toolDocument({ parameters: { type: 'object', properties: {}, required: ['a/b~c'] } }));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues).toEqual([{ pointer: '/parameters/properties/a~1b~0c', message: "required parameter 'a/b~c' is not defined in properties" }]);
  });

  it('accepts required parameters without a description, at any depth (a warning, not a refusal)', () => {
    const nested = { type: 'object', properties: { facet: { type: 'string' } }, required: ['facet'] };
    const parameters = { type: 'object', properties: { q: { type: 'string' }, groupBy: { type: 'array', items: nested, description: 'Groups.' } }, required: ['q', 'groupBy'] };
    expect(validator.validate(toolDocument({ parameters })).ok).toBe(true);
  });

  it('does not take inherited properties for declared parameters', () => {
    const result = validator.validate(toolDocument({ parameters: { type: 'object', properties: {}, required: ['constructor'] } }));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues).toEqual([{ pointer: '/parameters/properties/constructor', message: "required parameter 'constructor' is not defined in properties" }]);
  });

  it('does not require descriptions in returns', () => {
    expect(validator.validate(toolDocument({ returns: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } })).ok).toBe(true);
  });

  it('reports each problem once', () => {
    const result = validator.validate(toolDocument({ parameters: { type: 'object', properties: { a: { $ref: 'http://x/y' } }, $defs: { b: { $ref: 'http://x/y' } } } }));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues.map((i) => i.pointer).sort()).toEqual(['/parameters/$defs/b/$ref', '/parameters/properties/a/$ref']);
  });

  it('rejects $dynamicRef and $recursiveRef that leave the document', () => {
    const result = validator.validate(toolDocument({ parameters: { type: 'object', properties: { a: { $dynamicRef: 'https://x/y#meta' }, b: { $recursiveRef: 'other.json' } } } }));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues.map((i) => i.pointer).sort()).toEqual(['/parameters/properties/a/$dynamicRef', '/parameters/properties/b/$recursiveRef']);
  });

  it('never throws on arbitrary JSON input (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const result = validator.validate(value);
        if (!result.ok) expect(result.issues.length).toBeGreaterThan(0);
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on arbitrary parameters schemas (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom('type', 'properties', 'required', 'items', '$ref', 'enum', '$defs', 'minimum'), fc.jsonValue({ maxDepth: 4 })), (parameters) => {
        const result = validator.validate(toolDocument({ parameters }));
        expect(typeof result.ok).toBe('boolean');
      }),
      { numRuns: 300 },
    );
  });
});

describe('deriveSummary', () => {
  it('takes the first sentence', () => {
    expect(deriveSummary('Refund a paid invoice. Partial refunds too.', 200)).toBe('Refund a paid invoice.');
    expect(deriveSummary('Is it raining?   Ask this.', 200)).toBe('Is it raining?');
  });

  it('does not cut at a dot inside a word or number', () => {
    expect(deriveSummary('Reads v1.2 files and more', 200)).toBe('Reads v1.2 files and more');
  });

  it('cuts a long sentence at a word boundary with an ellipsis, within the limit', () => {
    const summary = deriveSummary('Refunds a paid invoice in full or in part when the customer asks', 30);
    expect(summary).toBe('Refunds a paid invoice in…');
    expect(summary.length).toBeLessThanOrEqual(30);
  });

  it('always fits the limit (property)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 400 }), fc.integer({ min: 16, max: 200 }), (text, max) => {
        expect(deriveSummary(text, max).length).toBeLessThanOrEqual(max);
      }),
    );
  });
});

describe('exceedsDepth', () => {
  it('counts objects and arrays alike', () => {
    expect(exceedsDepth({ a: [{ b: 1 }] }, 3)).toBe(false);
    expect(exceedsDepth({ a: [{ b: [] }] }, 3)).toBe(true);
    expect(exceedsDepth('scalar', 0)).toBe(false);
  });

  it('handles hostile depth without recursion', () => {
    const deep = JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`);
    expect(exceedsDepth(deep, 32)).toBe(true);
  });
});

describe('json-schema helpers', () => {
  it('escapes pointer tokens per RFC 6901', () => {
    expect(escapePointer('a/b~c')).toBe('a~1b~0c');
  });

  it('compiles a schema into a validator returning pointer details', () => {
    const validate = compileSchema({ type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] });
    expect(validate({ n: 1 })).toEqual([]);
    expect(validate({})).toEqual([{ pointer: '/n', message: "must have required property 'n'" }]);
    expect(validate({ n: 'x' })).toEqual([{ pointer: '/n', message: 'must be integer' }]);
  });

  it('compiles the same $id twice (schemas are not kept in the Ajv cache)', () => {
    const schema = () => ({ $id: 'https://example.com/tool.json', type: 'object' });
    expect(() => compileSchema(schema())).not.toThrow();
    expect(() => compileSchema(schema())).not.toThrow();
  });

  it('keeps earlier validators working after many compilations (compiling instances are replaced)', () => {
    const schema = (i: number) => ({ type: 'object', properties: { [`p${i}`]: { type: 'integer', minimum: i } }, required: [`p${i}`] });
    const validators = Array.from({ length: 450 }, (_, i) => compileSchema(schema(i)));
    for (const i of [0, 199, 200, 449]) {
      expect(validators[i]!({ [`p${i}`]: i })).toEqual([]);
      expect(validators[i]!({ [`p${i}`]: i - 1 })).toEqual([{ pointer: `/p${i}`, message: `must be >= ${i}` }]);
      expect(validators[i]!({})).toEqual([{ pointer: `/p${i}`, message: `must have required property 'p${i}'` }]);
    }
  });

  it('meta-validates against the dialect named by $schema', () => {
    expect(metaValidate({ type: 'object', prefixItems: [{ type: 'string' }] }, '/p')).toEqual([]);
    expect(metaValidate({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', items: [{ type: 'string' }] }, '/p')).toEqual([]);
    expect(metaValidate({ type: 'object', minProperties: -1 }, '/p').map((d) => d.pointer)).toEqual(['/p/minProperties']);
    expect(metaValidate({ $schema: 'https://example.com/custom', type: 'object' }, '/p')).toEqual([
      { pointer: '/p/$schema', message: 'must be draft 2020-12 or draft-07 (or absent for 2020-12)' },
    ]);
  });
});
