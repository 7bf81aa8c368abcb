import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { AppError } from '../../src/errors.js';
import { decodeCursor, encodeCursor } from '../../src/tools/service.js';
import { etagOf } from '../../src/tools/views.js';

describe('pagination cursor', () => {
  it('round-trips every valid tool name (property)', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$/), (name) => {
        expect(decodeCursor(encodeCursor(name))).toBe(name);
      }),
    );
  });

  it('rejects what the API never returned, as a 400 with a pointer', () => {
    for (const cursor of ['', '!!!', encodeCursor('../etc'), encodeCursor('a'.repeat(65))]) {
      try {
        decodeCursor(cursor);
        expect.unreachable(`cursor ${cursor} was accepted`);
      } catch (error) {
        expect(error).toBeInstanceOf(AppError);
        expect((error as AppError).statusCode).toBe(400);
        expect((error as AppError).details).toEqual([{ pointer: '/cursor', message: 'is not a cursor returned by this API', in: 'querystring' }]);
      }
    }
  });
});

describe('etagOf', () => {
  it('is a strong validator naming the revision, the content and retirement', () => {
    const contentHash = 'ab'.repeat(32);
    expect(etagOf({ revision: 3, contentHash, status: 'active' })).toBe(`"3-${'ab'.repeat(8)}"`);
    expect(etagOf({ revision: 3, contentHash, status: 'retired' })).toBe(`"3-${'ab'.repeat(8)}-r"`);
  });
});
