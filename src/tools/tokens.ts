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

/** Whitespace as the tokenizer's pre-split sees it, for the code units JSON text holds (a cheap test: this runs on every count). */
const isSpace = (code: number): boolean => code === 32 || (code >= 9 && code <= 13) || code === 0xa0 || code === 0x3000 || (code >= 0x2000 && code <= 0x200a) || code === 0x2028 || code === 0x2029;

/** Whether `text` has a run of whitespace, or of anything but whitespace, longer than RUN_CHARS (code units). */
function hasLongRun(text: string): boolean {
  let run = 0;
  let white = false;
  for (let i = 0; i < text.length; i++) {
    const space = isSpace(text.charCodeAt(i));
    run = space === white ? run + 1 : 1;
    white = space;
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
