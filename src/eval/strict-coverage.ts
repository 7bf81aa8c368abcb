import { openAiStrictCompatible, strictProblems } from '../tools/openai-strict.js';
import { toOpenAiStrict } from '../tools/strict-rendering.js';
import type { DatasetTool } from './dataset.js';
import { toToolDocument } from './dataset.js';

/** How many tools of a catalog can be called in OpenAI's strict mode, as published and with the strict rendering. */
export interface StrictCoverage {
  tools: number;
  /** Strict as published: `strict: true` without the rewrite. */
  asPublished: number;
  /** With `strict: true` on discover: rewritten into the strict subset. */
  rendered: number;
  /** Renderings the rule checker refuses (a rewrite bug): must be 0. */
  refused: number;
  /** Why the others have no strict form, by reason (pointers stripped), most frequent first. */
  fallbacks: [reason: string, tools: number][];
  /** Each rendered tool's original and strict parameters, for further checks. */
  renderings: { name: string; original: Record<string, unknown>; strict: Record<string, unknown> }[];
}

/** Renders every tool's parameters (as the registry stores them) in strict mode and counts the outcomes. */
export function strictCoverage(tools: DatasetTool[]): StrictCoverage {
  const fallbacks = new Map<string, number>();
  const renderings: StrictCoverage['renderings'] = [];
  let asPublished = 0;
  let refused = 0;
  for (const tool of tools) {
    const original = toToolDocument(tool).document.parameters as Record<string, unknown>;
    if (openAiStrictCompatible(original)) asPublished += 1;
    const rendering = toOpenAiStrict(original);
    if (!rendering.ok) {
      const reason = rendering.reason.replace(/^[^ ]*: /, '');
      fallbacks.set(reason, (fallbacks.get(reason) ?? 0) + 1);
      continue;
    }
    if (strictProblems(rendering.parameters).length > 0) refused += 1;
    renderings.push({ name: tool.name, original, strict: rendering.parameters });
  }
  return {
    tools: tools.length,
    asPublished,
    rendered: renderings.length,
    refused,
    fallbacks: [...fallbacks].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])),
    renderings,
  };
}
