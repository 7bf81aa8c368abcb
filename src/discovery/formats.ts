import type { ToolDocument } from '../tools/document.js';

export const FORMATS = ['openai', 'anthropic', 'mcp', 'raw'] as const;
export type Format = (typeof FORMATS)[number];

/** The parts of a stored tool a schema rendering needs. */
export type RenderableTool = Pick<ToolDocument, 'name' | 'description' | 'parameters' | 'returns' | 'side_effects' | 'summary'> &
  Partial<Pick<ToolDocument, 'version'>>;

/**
 * Renders a tool as the runtime's tool-definition format. `raw` is the registry's own view:
 * name, description, parameters and returns.
 */
export function renderTool(tool: RenderableTool, format: Format): Record<string, unknown> {
  switch (format) {
    case 'openai':
      return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } };
    case 'anthropic':
      return { name: tool.name, description: tool.description, input_schema: tool.parameters };
    case 'mcp':
      return {
        name: tool.name,
        description: tool.description,
        inputSchema: tool.parameters,
        ...(tool.returns ? { outputSchema: tool.returns } : {}),
        annotations: { title: tool.summary, readOnlyHint: !tool.side_effects, destructiveHint: tool.side_effects },
      };
    case 'raw':
      return { name: tool.name, description: tool.description, parameters: tool.parameters, ...(tool.returns ? { returns: tool.returns } : {}) };
  }
}
