import { fullFormats } from 'ajv-formats/dist/formats.js';
import { describe, expect, it } from 'vitest';

import { compileSchema } from '../../src/tools/json-schema.js';
import { isUrl } from '../../src/tools/url-format.js';

const pattern = fullFormats.url as RegExp;

describe('isUrl (the url format in linear time)', () => {
  it('answers as ajv-formats does, on short URLs and on longer ones checked in two parts', () => {
    const cases = [
      'https://example.com',
      'http://user:pw@example.com:8080/a/b?c=d#e',
      'ftp://files.example.org/pub',
      'http://localhost',
      'http://10.0.0.1/admin',
      'https://例子.测试/path',
      'mailto:someone@example.com',
      'https://example.com/a b',
      'example.com',
      `http://${':'.repeat(2000)}`,
      `https://example.com/${'x'.repeat(2000)}`,
    ];
    for (const value of cases) expect(isUrl(value), value).toBe(pattern.test(value));
  });

  it('checks a longer URL as its authority and a path without whitespace', () => {
    expect(isUrl(`https://example.com/${'x'.repeat(300_000)}`)).toBe(true);
    expect(isUrl(`https://example.com/${'x'.repeat(300_000)} y`)).toBe(false);
    expect(isUrl(`http://10.0.0.1/${'x'.repeat(300_000)}`)).toBe(false);
    expect(isUrl(`http://${':'.repeat(300_000)}`)).toBe(false);
    expect(isUrl(`http://${':'.repeat(300_000)}/`)).toBe(false);
    expect(isUrl('x'.repeat(300_000))).toBe(false);
  });

  it('is the format publishers\' schemas are checked with', () => {
    const validate = compileSchema({ type: 'object', properties: { link: { type: 'string', format: 'url' } } });
    expect(validate({ link: 'https://example.com/docs' })).toEqual([]);
    expect(validate({ link: `http://${':'.repeat(300_000)}` })).toMatchObject([{ pointer: '/link' }]);
  });
});
