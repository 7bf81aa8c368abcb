import { countTokens } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';

import { tokensOf } from '../../src/tools/tokens.js';

describe('tokensOf', () => {
  it('counts a real schema exactly, as compact JSON', () => {
    const schema = { name: 'issue_refund', description: 'Refund a paid invoice in full or in part. '.repeat(30), parameters: { type: 'object', properties: { invoice_id: { type: 'string' } } } };
    expect(tokensOf(schema)).toBe(countTokens(JSON.stringify(schema)));
  });

  it('counts a text with a run longer than any real word in pieces (byte-pair merging is quadratic in one run)', () => {
    const word = 'A'.repeat(200_000);
    const count = tokensOf({ properties: { [word]: { type: 'string' } } });
    expect(count).toBeGreaterThan(200_000 / 10);
    expect(count).toBeLessThan(200_000);
    expect(tokensOf({ description: `${' '.repeat(200_000)}x` })).toBeGreaterThan(0);
  });
});
