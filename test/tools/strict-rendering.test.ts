import { describe, expect, it } from 'vitest';

import { renderForModel, strictOptionProblem } from '../../src/tools/formats.js';
import { openAiStrictCompatible, strictProblems } from '../../src/tools/openai-strict.js';
import { toOpenAiStrict } from '../../src/tools/strict-rendering.js';

type Json = Record<string, unknown>;

function strict(parameters: Json): Json {
  const rendering = toOpenAiStrict(parameters);
  if (!rendering.ok) throw new Error(`expected a strict rendering: ${rendering.reason}`);
  expect(strictProblems(rendering.parameters)).toEqual([]);
  return rendering.parameters;
}

function reason(parameters: Json): string {
  const rendering = toOpenAiStrict(parameters);
  if (rendering.ok) throw new Error('expected no strict rendering');
  return rendering.reason;
}

describe('toOpenAiStrict', () => {
  it('makes every property required, optional ones nullable, and closes every object', () => {
    const parameters = {
      type: 'object',
      properties: {
        invoice_id: { type: 'string', description: 'The invoice.' },
        amount: { type: 'number' },
        reason: { type: 'string', enum: ['damaged', 'late'] },
        address: { type: 'object', properties: { city: { type: 'string' }, zip: { type: 'string' } }, required: ['city'] },
      },
      required: ['invoice_id'],
    };
    const before = structuredClone(parameters);
    expect(strict(parameters)).toEqual({
      type: 'object',
      properties: {
        invoice_id: { type: 'string', description: 'The invoice.' },
        amount: { type: ['number', 'null'] },
        reason: { type: ['string', 'null'], enum: ['damaged', 'late', null] },
        address: {
          type: ['object', 'null'],
          properties: { city: { type: 'string' }, zip: { type: ['string', 'null'] } },
          required: ['city', 'zip'],
          additionalProperties: false,
        },
      },
      required: ['invoice_id', 'amount', 'reason', 'address'],
      additionalProperties: false,
    });
    expect(parameters).toEqual(before);
  });

  it('moves keywords strict mode lacks into the description', () => {
    const out = strict({
      type: 'object',
      properties: { name: { type: 'string', description: 'Who.', minLength: 2, default: 'me', 'x-source': 'crm', format: 'uri' } },
      required: ['name'],
    });
    expect(out.properties).toEqual({ name: { type: 'string', description: 'Who. (minLength: 2; default: "me"; x-source: "crm"; format: "uri")' } });
  });

  it('keeps a null the original allows, and wraps a $ref or const to make it nullable', () => {
    const out = strict({
      type: 'object',
      $defs: { money: { type: 'object', properties: { cents: { type: 'integer' } }, required: ['cents'] } },
      properties: { note: { type: ['string', 'null'] }, total: { $ref: '#/$defs/money', description: 'Total.' }, kind: { const: 'refund' } },
    });
    expect(out.properties).toEqual({
      note: { type: ['string', 'null'] },
      total: { anyOf: [{ $ref: '#/$defs/money' }, { type: 'null' }], description: 'Total.' },
      kind: { anyOf: [{ const: 'refund' }, { type: 'null' }] },
    });
    expect(out.$defs).toEqual({ money: { type: 'object', properties: { cents: { type: 'integer' } }, required: ['cents'], additionalProperties: false } });
  });

  it('renames definitions refs to $defs', () => {
    const out = strict({ type: 'object', definitions: { id: { type: 'string' } }, properties: { id: { $ref: '#/definitions/id' } }, required: ['id'] });
    expect(out).toMatchObject({ $defs: { id: { type: 'string' } }, properties: { id: { $ref: '#/$defs/id' } } });
  });

  it('turns a oneOf into an anyOf only when no value can match two branches', () => {
    const disjoint = strict({ type: 'object', properties: { id: { oneOf: [{ type: 'string' }, { type: 'integer' }] } }, required: ['id'] });
    expect(disjoint.properties).toEqual({ id: { anyOf: [{ type: 'string' }, { type: 'integer' }] } });
    const tagged = {
      oneOf: [
        { type: 'object', properties: { kind: { const: 'card' }, last4: { type: 'string' } }, required: ['kind', 'last4'] },
        { type: 'object', properties: { kind: { const: 'bank' }, iban: { type: 'string' } }, required: ['kind', 'iban'] },
      ],
    };
    expect(strict({ type: 'object', properties: { method: tagged }, required: ['method'] }).properties).toMatchObject({ method: { anyOf: [{ required: ['kind', 'last4'] }, { required: ['kind', 'iban'] }] } });
    expect(reason({ type: 'object', properties: { v: { oneOf: [{ type: 'number' }, { type: 'integer' }] } } })).toMatch(/oneOf branches 0 and 1 may both match/);
  });

  it('merges an allOf of objects, and moves an anyOf that only says which properties are needed', () => {
    const merged = strict({ allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { type: 'integer' } } }] });
    expect(merged).toEqual({
      type: 'object',
      properties: { a: { type: 'string' }, b: { type: ['integer', 'null'] } },
      required: ['a', 'b'],
      additionalProperties: false,
    });
    const either = strict({ type: 'object', properties: { email: { type: 'string' }, phone: { type: 'string' } }, anyOf: [{ required: ['email'] }, { required: ['phone'] }] });
    expect(either.description).toBe('(anyOf: [{"required":["email"]},{"required":["phone"]}])');
  });

  it('renders a root without properties as a tool that takes no arguments', () => {
    expect(strict({ type: 'object' })).toEqual({ type: 'object', properties: {}, required: [], additionalProperties: false });
  });

  it('gives a reason instead of a rendering for what strict mode cannot say', () => {
    expect(reason({ type: 'object', properties: { meta: { type: 'object', additionalProperties: { type: 'string' } } } })).toMatch(/free-form keys/);
    expect(reason({ type: 'object', properties: { value: { description: 'anything' } } })).toMatch(/any type/);
    expect(reason({ type: 'object', properties: { list: { type: 'array' } } })).toMatch(/items of any type/);
    expect(reason({ type: 'object', properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }], items: { type: 'string' } } } })).toMatch(/tuple/);
    expect(reason({ type: 'object', properties: { a: { type: 'string' }, b: { $ref: '#/properties/a' } } })).toMatch(/\$ref/);
    const huge = Object.fromEntries(Array.from({ length: 5001 }, (_, i) => [`p${i}`, { type: 'string' }]));
    expect(reason({ type: 'object', properties: huge })).toMatch(/5001 properties/);
    expect(reason({ type: 'object', properties: { e: { type: 'string', enum: Array.from({ length: 1001 }, (_, i) => `v${i}`) } } })).toMatch(/1002 enum values/); // an optional enum gains null
  });
});

describe('strictProblems', () => {
  it('accepts what OpenAI documents and refuses the rest', () => {
    expect(openAiStrictCompatible({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false })).toBe(true);
    expect(strictProblems({ type: 'object', properties: { a: { type: 'string' } } })).toEqual(['/: additionalProperties must be false', '/: every property must be required (not: a)']);
    expect(strictProblems({ type: 'object', properties: { a: { type: 'string', minLength: 1 } }, required: ['a'], additionalProperties: false })).toEqual(["/properties/a: keyword 'minLength' is not supported"]);
    expect(strictProblems({ type: 'object', properties: { a: {} }, required: ['a'], additionalProperties: false })).toEqual(['/properties/a: a schema needs a type']);
    expect(strictProblems({ anyOf: [{ type: 'object', properties: {}, required: [], additionalProperties: false }] })[0]).toBe('/: the root must be an object');
  });
});

describe('renderForModel', () => {
  const tool = {
    name: 'issue_refund',
    summary: 'Refund.',
    description: 'Refund a paid invoice.',
    not_for: 'cancelling orders',
    side_effects: true,
    returns: null,
    parameters: { type: 'object', properties: { invoice_id: { type: 'string' }, note: { type: 'string' } }, required: ['invoice_id'] },
  };
  const parameters = {
    type: 'object',
    properties: { invoice_id: { type: 'string' }, note: { type: ['string', 'null'] } },
    required: ['invoice_id', 'note'],
    additionalProperties: false,
  };
  const description = 'Refund a paid invoice.\n\nNot for: cancelling orders';

  it('renders the strict rendering with strict: true in both OpenAI formats', () => {
    expect(renderForModel(tool, 'openai', true)).toEqual({ schema: { type: 'function', function: { name: 'issue_refund', description, parameters, strict: true } } });
    expect(renderForModel(tool, 'openai-responses', true)).toEqual({ schema: { type: 'function', name: 'issue_refund', description, parameters, strict: true } });
  });

  it('falls back to the usual rendering with strict: false and the reason', () => {
    const open = { ...tool, parameters: { type: 'object', properties: { meta: { type: 'object' } } } };
    const rendered = renderForModel(open, 'openai', true);
    expect(rendered.schema).toEqual({ type: 'function', function: { name: 'issue_refund', description, parameters: open.parameters, strict: false } });
    expect(rendered.strictFallback).toMatch(/\/properties\/meta: an object with free-form keys/);
  });

  it('leaves every rendering unchanged without strict, and refuses strict beside a format without it', () => {
    expect(renderForModel(tool, 'openai').schema.function).toMatchObject({ parameters: tool.parameters });
    expect(strictOptionProblem('anthropic', true)).toMatch(/openai and openai-responses only, not anthropic/);
    expect(strictOptionProblem('anthropic', false)).toBeUndefined();
    expect(strictOptionProblem('openai', true)).toBeUndefined();
  });
});
