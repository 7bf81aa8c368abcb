import { describe, expect, it } from 'vitest';

import { documentChanges } from '../../src/client/compare.js';
import type { ToolDocument, ToolView } from '../../src/client/types.js';
import { toolDocument } from '../helpers/fixtures.js';

const stored = (doc: Record<string, unknown>): ToolView =>
  ({
    policy: [],
    not_for: null,
    returns: null,
    aliases: [],
    examples: [],
    tags: [],
    category: null,
    required_scopes: [],
    sensitivity: 'low',
    side_effects: false,
    ...doc,
    status: 'active',
    revision: 1,
  }) as unknown as ToolView;

describe('documentChanges', () => {
  it('sees nothing to publish when the stored tool equals the document with defaults applied', () => {
    const local = { name: 't', version: '1.0.0', description: 'Does things.', parameters: { type: 'object' } } as ToolDocument;
    expect(documentChanges(local, stored({ ...local, summary: 'Does things.' }))).toEqual([]);
  });

  it('names every changed field, policy rules and extensions included', () => {
    const doc = toolDocument() as unknown as ToolDocument;
    const changed = { ...doc, policy: [{ when: [{ pointer: '/a', op: 'exists' }], deny: true }], 'x-owner': 'team-a' } as ToolDocument;
    expect(documentChanges(changed, stored(doc as unknown as Record<string, unknown>))).toEqual(['policy', 'extensions']);
  });
});
