import { describe, expect, it } from 'vitest';

import { FORMATS, modelDescription, renderTool } from '../../src/tools/formats.js';
import { openAiStrictCompatible } from '../../src/tools/openai-strict.js';
import { tokenCosts, tokensOf } from '../../src/tools/tokens.js';

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
      title: 'Issue refund',
      annotations: { title: 'Issue refund', readOnlyHint: false, destructiveHint: true },
    });
    expect(renderTool({ ...tool, returns: null, side_effects: false }, 'mcp')).not.toHaveProperty('outputSchema');
  });

  it('renders the OpenAI Responses function tool, flat, with strict said explicitly', () => {
    expect(renderTool(tool, 'openai-responses')).toEqual({ type: 'function', name: 'issue_refund', description: tool.description, parameters: tool.parameters, strict: false });
  });

  it('renders the Gemini function declaration with parametersJsonSchema and responseJsonSchema', () => {
    expect(renderTool(tool, 'gemini')).toEqual({ name: 'issue_refund', description: tool.description, parametersJsonSchema: tool.parameters, responseJsonSchema: tool.returns });
    expect(renderTool({ ...tool, returns: null }, 'gemini')).not.toHaveProperty('responseJsonSchema');
  });

  it('puts not_for into the description of every format', () => {
    const guarded = { ...tool, not_for: 'Not for cancelling unpaid orders; use cancel_order.' };
    expect(modelDescription(guarded)).toBe(`${tool.description}\n\nNot for cancelling unpaid orders; use cancel_order.`);
    expect(modelDescription({ ...tool, not_for: 'cancelling unpaid orders' })).toBe(`${tool.description}\n\nNot for: cancelling unpaid orders`);
    for (const format of FORMATS) expect(JSON.stringify(renderTool(guarded, format))).toContain('use cancel_order');
  });

  it('keeps imported MCP hints and title in the mcp format', () => {
    const imported = { ...tool, extensions: { 'x-mcp': { tool: 'refund', title: 'Refund invoice', annotations: { idempotentHint: true, openWorldHint: false, destructiveHint: false } } } };
    const rendered = renderTool(imported, 'mcp');
    expect(rendered.title).toBe('Refund invoice');
    // Side effects, but the server said not destructive: that is kept.
    expect(rendered.annotations).toEqual({ title: 'Refund invoice', readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false });
  });

  it('sets OpenAI strict only for schemas strict mode accepts unchanged', () => {
    const strictSchema = {
      type: 'object',
      additionalProperties: false,
      properties: { id: { type: 'string', description: 'Invoice' }, lines: { type: 'array', items: { type: 'object', additionalProperties: false, properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] } } },
      required: ['id', 'lines'],
    };
    expect(openAiStrictCompatible(strictSchema)).toBe(true);
    expect(renderTool({ ...tool, parameters: strictSchema }, 'openai')).toMatchObject({ function: { strict: true } });
    expect(renderTool({ ...tool, parameters: strictSchema }, 'openai-responses')).toMatchObject({ strict: true });
    expect(renderTool(tool, 'openai')).not.toHaveProperty('function.strict');
    // An optional property, a missing additionalProperties: false, an unsupported keyword: not strict.
    expect(openAiStrictCompatible({ ...strictSchema, required: ['id'] })).toBe(false);
    expect(openAiStrictCompatible({ ...strictSchema, additionalProperties: true })).toBe(false);
    expect(openAiStrictCompatible({ ...strictSchema, properties: { ...strictSchema.properties, id: { type: 'string', minLength: 3 } } })).toBe(false);
    expect(openAiStrictCompatible({ ...strictSchema, properties: { ...strictSchema.properties, id: { type: 'string', format: 'uri' } } })).toBe(false);
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
