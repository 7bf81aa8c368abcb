import { countTokens } from 'gpt-tokenizer';

import { FORMATS, type RenderableTool, renderTool } from './formats.js';
import type { TokenCosts } from './model.js';

/**
 * Longest run of one kind (whitespace, or anything else) counted whole. Byte-pair merging is
 * quadratic in the length of one pre-token, so a 100,000-character word or run of spaces in a
 * publisher's schema took seconds; a text with a longer run is counted in pieces of this size,
 * which real text never has and which changes the count by at most a token per piece.
 */
const RUN_CHARS = 1000;

/** Whether `text` has a run of whitespace, or of anything but whitespace, longer than RUN_CHARS. */
function hasLongRun(text: string): boolean {
  let run = 0;
  let white: boolean | undefined;
  for (const char of text) {
    const isWhite = char.trim() === '';
    run = isWhite === white ? run + 1 : 1;
    white = isWhite;
    if (run > RUN_CHARS) return true;
  }
  return false;
}

/** Prompt tokens (o200k_base) of a text, in linear time whatever the text. */
function countBounded(text: string): number {
  if (!hasLongRun(text)) return countTokens(text);
  let total = 0;
  for (let start = 0; start < text.length; start += RUN_CHARS) total += countTokens(text.slice(start, start + RUN_CHARS));
  return total;
}

/** Prompt tokens (o200k_base) of a rendered schema, as compact JSON. */
export function tokensOf(rendered: unknown): number {
  return countBounded(JSON.stringify(rendered));
}

/** What one tool costs a prompt in every format. */
export function tokenCosts(tool: RenderableTool): TokenCosts {
  return Object.fromEntries(FORMATS.map((f) => [f, tokensOf(renderTool(tool, f))])) as TokenCosts;
}
