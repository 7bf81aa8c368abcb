import { describe, expect, it } from 'vitest';

import { holdsAll, isPublisher, type Principal } from '../../src/auth/principal.js';

const principal = (scopes: string[]): Principal => ({ tenant: 't', subject: null, scopes });

describe('principal', () => {
  it('is a publisher only with registry:publish exactly', () => {
    expect(isPublisher(principal(['registry:publish']))).toBe(true);
    expect(isPublisher(principal(['registry:publisher', 'registry', 'REGISTRY:PUBLISH']))).toBe(false);
  });

  it('holds all of the required scopes, or not', () => {
    expect(holdsAll(principal([]), [])).toBe(true);
    expect(holdsAll(principal(['a', 'b']), ['a', 'b'])).toBe(true);
    expect(holdsAll(principal(['a']), ['a', 'b'])).toBe(false);
  });
});
