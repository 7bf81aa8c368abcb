import { describe, expect, it } from 'vitest';

import { FORMATS, renderTool } from '../../src/discovery/formats.js';
import { tokenCosts, tokensOf } from '../../src/discovery/tokens.js';

const tool = {
  name: 'issue_refund',
  version: '1.0.0',
  summary: 'Refund a paid invoice.',
  description: 'Refund a paid invoice in full or in part.',
  side_effects: true,
  parameters: { type: 'object', properties: { invoice_id: { type: 'string', description: 'The invoice.' } }, required: ['invoice_id'] },
  returns: { type: 'object', properties: { refund_id: { type: 'string' } } },
};

describe('renderTool', () => {
  it('renders the OpenAI function format', () => {
    expect(renderTool(tool, 'openai')).toEqual({ type: 'function', function: { name: 'issue_refund', description: tool.description, parameters: tool.parameters } });
  });

  it('renders the Anthropic tool format', () => {
    expect(renderTool(tool, 'anthropic')).toEqual({ name: 'issue_refund', description: tool.description, input_schema: tool.parameters });
  });

  it('renders the MCP tool format with annotations and the output schema', () => {
    expect(renderTool(tool, 'mcp')).toEqual({
      name: 'issue_refund',
      description: tool.description,
      inputSchema: tool.parameters,
      outputSchema: tool.returns,
      annotations: { title: 'Refund a paid invoice.', readOnlyHint: false, destructiveHint: true },
    });
    expect(renderTool({ ...tool, returns: null, side_effects: false }, 'mcp')).not.toHaveProperty('outputSchema');
  });

  it('renders the raw format, returns only when present', () => {
    expect(renderTool(tool, 'raw')).toEqual({ name: 'issue_refund', description: tool.description, parameters: tool.parameters, returns: tool.returns });
    expect(renderTool({ ...tool, returns: null }, 'raw')).not.toHaveProperty('returns');
  });
});

describe('token accounting', () => {
  it('counts o200k tokens of the compact JSON', () => {
    expect(tokensOf({})).toBe(1);
    expect(tokensOf({ name: 'issue_refund' })).toBeGreaterThan(tokensOf({}));
  });

  it('costs a tool in every format, growing with its schema', () => {
    const costs = tokenCosts(tool);
    expect(Object.keys(costs).sort()).toEqual([...FORMATS].sort());
    for (const format of FORMATS) expect(costs[format]).toBe(tokensOf(renderTool(tool, format)));
    const bigger = tokenCosts({ ...tool, description: `${tool.description} ${'More detail. '.repeat(50)}` });
    for (const format of FORMATS) expect(bigger[format]).toBeGreaterThan(costs[format]);
  });
});
