import { countTokens } from 'gpt-tokenizer';

import { FORMATS, type RenderableTool, renderTool } from './formats.js';
import type { TokenCosts } from './model.js';

/** Prompt tokens (o200k_base) of a rendered schema, as compact JSON. */
export function tokensOf(rendered: unknown): number {
  return countTokens(JSON.stringify(rendered));
}

/** What one tool costs a prompt in every format. */
export function tokenCosts(tool: RenderableTool): TokenCosts {
  return Object.fromEntries(FORMATS.map((f) => [f, tokensOf(renderTool(tool, f))])) as TokenCosts;
}
