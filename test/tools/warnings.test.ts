import { describe, expect, it } from 'vitest';

import { MAX_WARNINGS, toolWarnings } from '../../src/tools/warnings.js';

const codes = (doc: Record<string, unknown>) => toolWarnings(doc).map(({ code, pointer }) => `${code} ${pointer}`);

describe('toolWarnings', () => {
  it('reports required and optional parameters without a description at any depth, items and combinations included', () => {
    const parameters = {
      type: 'object',
      properties: {
        q: { type: 'string' },
        page: { type: 'integer' },
        filter: { anyOf: [{ type: 'object', properties: { field: { type: 'string' } }, required: ['field'] }, { type: 'null' }], description: 'Filter.' },
        rows: { type: 'array', description: 'Rows.', items: { type: 'object', properties: { id: { type: 'string', description: 'Id.' }, tag: { type: 'string' } }, required: ['id', 'tag'] } },
      },
      required: ['q'],
    };
    expect(codes({ parameters })).toEqual([
      'parameter_description_missing /parameters/properties/filter/anyOf/0/properties/field/description',
      'optional_parameter_description_missing /parameters/properties/page/description',
      'parameter_description_missing /parameters/properties/q/description',
      'parameter_description_missing /parameters/properties/rows/items/properties/tag/description',
    ]);
  });

  it('takes the description of a referenced definition, and checks the definitions\' own properties', () => {
    const parameters = {
      type: 'object',
      properties: { target: { $ref: '#/$defs/Target' }, other: { $ref: '#/$defs/Bare' } },
      required: ['target', 'other'],
      $defs: { Target: { type: 'object', description: 'Where to.', properties: { path: { type: 'string' } }, required: ['path'] }, Bare: { type: 'string' } },
    };
    expect(codes({ parameters })).toEqual(['parameter_description_missing /parameters/$defs/Target/properties/path/description', 'parameter_description_missing /parameters/properties/other/description']);
  });

  it('reports unknown keywords and formats that are not typos, in parameters and returns, and never typos (those are refused)', () => {
    const parameters = { type: 'object', properties: { sort: { type: 'string', optional: true, description: 'Sort.' }, dir: { type: 'string', format: 'file-path', description: 'Dir.' }, n: { type: 'integer', minimun: 1, description: 'N.' } } };
    expect(codes({ parameters, returns: { type: 'object', choices: ['a'] } })).toEqual([
      'unknown_format /parameters/properties/dir/format',
      'unknown_keyword /parameters/properties/sort/optional',
      'unknown_keyword /returns/choices',
    ]);
  });

  it('reports nothing for a described schema and caps a long list', () => {
    expect(toolWarnings({ parameters: { type: 'object', properties: { a: { type: 'string', description: 'A.' } }, required: ['a'] }, returns: { type: 'object', properties: { b: { type: 'string' } } } })).toEqual([]);
    const many = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`p${i}`, { type: 'string' }]));
    expect(toolWarnings({ parameters: { type: 'object', properties: many } })).toHaveLength(MAX_WARNINGS);
    expect(toolWarnings({ parameters: { type: 'object', properties: many } }, Number.POSITIVE_INFINITY)).toHaveLength(300);
  });
});
