import { describe, expect, it } from 'vitest';

import { expandIdentifiers, parameterText, searchTexts, splitIdentifier } from '../../src/tools/lexical/search-text.js';
import { ToolValidator } from '../../src/tools/validation.js';
import { toolDocument } from '../helpers/fixtures.js';

describe('splitIdentifier', () => {
  it.each([
    ['getWeatherForecast', 'get weather forecast'],
    ['PDF_URLTool', 'pdf url tool'],
    ['billing.issue_refund2', 'billing issue refund 2'],
    ['terminate_batch_process', 'terminate batch process'],
    ['kebab-case/path:name', 'kebab case path name'],
    ['HTTPServer', 'http server'],
    ['v2Api', 'v 2 api'],
    ['already plain', 'already plain'],
    ['', ''],
  ])('%s -> %s', (input, expected) => {
    expect(splitIdentifier(input)).toBe(expected);
  });
});

describe('splitIdentifier on long identifiers', () => {
  it('splits an acronym from the word after it however long the run of capitals (linear: a lookahead, no backtracking)', () => {
    expect(splitIdentifier('ABCdEFg')).toBe('ab cd e fg');
    const capitals = 'A'.repeat(200_000);
    expect(splitIdentifier(`${capitals}Tool`)).toBe(`${capitals.toLowerCase()} tool`);
  });
});

describe('expandIdentifiers', () => {
  it('keeps identifiers and adds their words', () => {
    expect(expandIdentifiers('use issue_refund or getInvoice first')).toBe('use issue_refund issue refund or getInvoice get invoice first');
  });

  it('leaves plain words alone', () => {
    expect(expandIdentifiers('refund a paid invoice')).toBe('refund a paid invoice');
  });
});

describe('parameterText', () => {
  it('collects split names and descriptions of nested properties and array items', () => {
    const text = parameterText({
      type: 'object',
      properties: {
        invoiceId: { type: 'string', description: 'The invoice.' },
        lines: { type: 'array', items: { type: 'object', properties: { unit_price: { type: 'number', description: 'Price per unit.' } } } },
      },
    });
    for (const part of ['invoice id', 'The invoice.', 'lines', 'unit price', 'Price per unit.']) expect(text).toContain(part);
  });

  it('is bounded', () => {
    const properties = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`param_${i}`, { type: 'string', description: 'x'.repeat(50) }]));
    expect(parameterText({ type: 'object', properties }, 1000).length).toBeLessThanOrEqual(1000);
  });
});

describe('searchTexts', () => {
  it('builds the four weighted texts of a card', () => {
    const result = new ToolValidator({ descriptionLength: 1024, summaryLength: 200, schemaDepth: 32 }).validate(toolDocument({ category: 'billing_ops' }));
    if (!result.ok) throw new Error('fixture must be valid');
    const texts = searchTexts(result.document);
    expect(texts.name.startsWith('issue refund')).toBe(true);
    expect(texts.card).toContain('Refund a paid invoice.');
    expect(`${texts.name} ${texts.card}`).toContain('give money back');
    expect(texts.card).toContain('billing ops');
    expect(texts.body).toContain('Refund invoice #1024');
    expect(texts.params).toContain('invoice id');
  });
});
