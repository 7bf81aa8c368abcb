import { countTokens } from 'gpt-tokenizer';

import { type Format, FORMATS, type RenderableTool, renderTool } from './formats.js';

/** Prompt tokens (o200k_base) of a rendered schema, as compact JSON. */
export function tokensOf(rendered: unknown): number {
  return countTokens(JSON.stringify(rendered));
}

export type TokenCosts = Record<Format, number>;

/** What one tool costs a prompt in every format. */
export function tokenCosts(tool: RenderableTool): TokenCosts {
  return Object.fromEntries(FORMATS.map((f) => [f, tokensOf(renderTool(tool, f))])) as TokenCosts;
}
