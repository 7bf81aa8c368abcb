import { describe, expect, it } from 'vitest';

import { isPublisher, type Principal } from '../../src/auth/principal.js';

const principal = (scopes: string[]): Principal => ({ tenant: 't', subject: null, scopes });

describe('principal', () => {
  it('is a publisher only with registry:publish exactly', () => {
    expect(isPublisher(principal(['registry:publish']))).toBe(true);
    expect(isPublisher(principal(['registry:publisher', 'registry', 'REGISTRY:PUBLISH']))).toBe(false);
  });

});
