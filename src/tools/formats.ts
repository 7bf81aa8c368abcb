import type { ToolDocument } from './model.js';
import { openAiStrictCompatible } from './openai-strict.js';
import { toOpenAiStrict } from './strict-rendering.js';

export const FORMATS = ['openai', 'openai-responses', 'anthropic', 'gemini', 'mcp', 'raw'] as const;
export type Format = (typeof FORMATS)[number];

/** The parts of a stored tool a schema rendering needs. */
export type RenderableTool = Pick<ToolDocument, 'name' | 'description' | 'parameters' | 'returns' | 'side_effects' | 'summary'> &
  Partial<Pick<ToolDocument, 'version' | 'not_for' | 'extensions'>>;

const NEGATIVE_LEAD = /^(not for|not to be used|do not|don't|never|avoid)\b/i;

/**
 * The description a model reads: the publisher's description followed by the tool's `not_for`
 * guidance. Runtimes send the schema, not the card, so this is the only way the model learns when
 * not to pick a tool that overlaps another.
 */
export function modelDescription(tool: Pick<RenderableTool, 'description' | 'not_for'>): string {
  const guidance = notForSentence(tool.not_for);
  return guidance ? `${tool.description}\n\n${guidance}` : tool.description;
}

/** `not_for` as a sentence that reads as negative guidance ("Not for: ..." unless it already says so). */
export function notForSentence(notFor: string | null | undefined): string | undefined {
  const text = notFor?.trim();
  if (!text) return undefined;
  return NEGATIVE_LEAD.test(text) ? text : `Not for: ${text}`;
}

type McpAnnotations = { title?: string; readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };

/** MCP annotations an imported tool came with (kept under `x-mcp` by import-mcp or a publisher). */
function importedMcp(tool: RenderableTool): { title?: string; annotations: McpAnnotations } {
  const xMcp = tool.extensions?.['x-mcp'];
  if (typeof xMcp !== 'object' || xMcp === null) return { annotations: {} };
  const { title, annotations } = xMcp as { title?: unknown; annotations?: unknown };
  const raw = typeof annotations === 'object' && annotations !== null ? (annotations as Record<string, unknown>) : {};
  const picked: McpAnnotations = {};
  for (const hint of ['destructiveHint', 'idempotentHint', 'openWorldHint'] as const) if (typeof raw[hint] === 'boolean') picked[hint] = raw[hint];
  if (typeof raw.title === 'string' && raw.title.trim() !== '') picked.title = raw.title.trim();
  return { ...(typeof title === 'string' && title.trim() !== '' ? { title: title.trim() } : {}), annotations: picked };
}

/** A human-readable title from a tool name: `issue_refund` -> "Issue refund", `getWeather` -> "Get weather". */
function titleOf(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_.-]+/g, ' ').trim().toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The MCP `Tool` shape: a title, the hints the registry knows, and the imported ones it kept. */
function mcpTool(tool: RenderableTool, description: string): Record<string, unknown> {
  const imported = importedMcp(tool);
  const title = imported.title ?? imported.annotations.title ?? titleOf(tool.name);
  return {
    name: tool.name,
    title,
    description,
    inputSchema: tool.parameters,
    ...(tool.returns ? { outputSchema: tool.returns } : {}),
    annotations: {
      title,
      // The registry's side_effects decides read-only; an imported tool's own destructiveHint is
      // kept (a tool with side effects need not be destructive), else MCP's default (true).
      readOnlyHint: !tool.side_effects,
      destructiveHint: tool.side_effects && (imported.annotations.destructiveHint ?? true),
      ...(imported.annotations.idempotentHint === undefined ? {} : { idempotentHint: imported.annotations.idempotentHint }),
      ...(imported.annotations.openWorldHint === undefined ? {} : { openWorldHint: imported.annotations.openWorldHint }),
    },
  };
}

/**
 * Renders a tool as the runtime's tool-definition format; every description carries the tool's
 * `not_for` guidance. `raw` is the registry's own view: name, description, parameters and returns.
 * OpenAI formats set `strict: true` only when the schema already meets strict mode's rules (the
 * Responses API defaults to strict, so there `strict: false` is explicit otherwise).
 */
export function renderTool(tool: RenderableTool, format: Format): Record<string, unknown> {
  const description = modelDescription(tool);
  switch (format) {
    case 'openai': {
      const strict = openAiStrictCompatible(tool.parameters);
      return { type: 'function', function: { name: tool.name, description, parameters: tool.parameters, ...(strict ? { strict: true } : {}) } };
    }
    case 'openai-responses':
      return { type: 'function', name: tool.name, description, parameters: tool.parameters, strict: openAiStrictCompatible(tool.parameters) };
    case 'anthropic':
      return { name: tool.name, description, input_schema: tool.parameters };
    case 'gemini':
      return { name: tool.name, description, parametersJsonSchema: tool.parameters, ...(tool.returns ? { responseJsonSchema: tool.returns } : {}) };
    case 'mcp':
      return mcpTool(tool, description);
    case 'raw':
      return { name: tool.name, description, parameters: tool.parameters, ...(tool.returns ? { returns: tool.returns } : {}) };
  }
}

/** The formats with OpenAI's strict mode, where a request may ask for the strict rendering. */
export const STRICT_CAPABLE_FORMATS: readonly Format[] = ['openai', 'openai-responses'];

/** Why `strict` cannot go with `format` (for a 400 naming `/strict`); undefined when it can. */
export function strictOptionProblem(format: Format, strict: boolean | undefined): string | undefined {
  return strict === true && !STRICT_CAPABLE_FORMATS.includes(format) ? `strict applies to the formats ${STRICT_CAPABLE_FORMATS.join(' and ')} only, not ${format}` : undefined;
}

/** A Chat Completions function tool in its strict rendering (what the `openai` package calls ChatCompletionFunctionTool). */
export interface OpenAiStrictChatTool {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown>; strict: true };
}

/** A Responses API function tool in its strict rendering (the `openai` package's FunctionTool). */
export interface OpenAiStrictResponsesTool {
  type: 'function';
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  strict: true;
}

/** The strict rendering of a tool in `format`, or undefined with the reason when it has none. */
export function renderStrict(tool: RenderableTool, format: 'openai'): { tool: OpenAiStrictChatTool } | { reason: string };
export function renderStrict(tool: RenderableTool, format: 'openai-responses'): { tool: OpenAiStrictResponsesTool } | { reason: string };
export function renderStrict(tool: RenderableTool, format: 'openai' | 'openai-responses'): { tool: OpenAiStrictChatTool | OpenAiStrictResponsesTool } | { reason: string } {
  const rendering = toOpenAiStrict(tool.parameters);
  if (!rendering.ok) return { reason: rendering.reason };
  const description = modelDescription(tool);
  const function_ = { name: tool.name, description, parameters: rendering.parameters, strict: true as const };
  return { tool: format === 'openai' ? { type: 'function', function: function_ } : { type: 'function', ...function_ } };
}

/** A tool as a runtime asked for it, and why it is not strict when strict was asked and impossible. */
export interface ModelTool {
  schema: Record<string, unknown>;
  strictFallback?: string;
}

/**
 * renderTool, or with `strict` (OpenAI formats only) the strict rendering: the parameters rewritten
 * into strict mode's subset (`strict-rendering.ts`) and `strict: true`. A schema that has no strict
 * form is rendered as renderTool does, with `strict: false`, and the reason.
 */
export function renderForModel(tool: RenderableTool, format: Format, strict = false): ModelTool {
  if (!strict || (format !== 'openai' && format !== 'openai-responses')) return { schema: renderTool(tool, format) };
  const rendered = format === 'openai' ? renderStrict(tool, format) : renderStrict(tool, format);
  if ('tool' in rendered) return { schema: { ...rendered.tool } };
  const plain = renderTool(tool, format);
  const schema = format === 'openai' ? { ...plain, function: { ...(plain.function as Record<string, unknown>), strict: false } } : { ...plain, strict: false };
  return { schema, strictFallback: rendered.reason };
}
