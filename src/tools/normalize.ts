import type { ToolDocument, ToolDocumentInput } from './model.js';

/** First sentence of the description, cut at a word boundary to fit the summary limit. */
export function deriveSummary(description: string, maxLength: number): string {
  const text = description.replace(/\s+/g, ' ').trim();
  const sentence = /^(.+?[.!?])(\s|$)/.exec(text)?.[1] ?? text;
  if (sentence.length <= maxLength) return sentence;
  const cut = sentence.slice(0, maxLength - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > maxLength / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** The document as stored: every default applied, scopes deduplicated and sorted, `x-` fields kept apart. */
export function normalizeDocument(doc: ToolDocumentInput, summaryLength: number): ToolDocument {
  const extensions: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(doc)) if (key.startsWith('x-')) extensions[key] = value;
  return {
    name: doc.name,
    version: doc.version,
    description: doc.description.trim(),
    summary: doc.summary?.trim() || deriveSummary(doc.description, summaryLength),
    not_for: doc.not_for?.trim() || null,
    aliases: doc.aliases ?? [],
    examples: doc.examples ?? [],
    tags: doc.tags ?? [],
    category: doc.category ?? null,
    required_scopes: [...new Set(doc.required_scopes ?? [])].sort(),
    sensitivity: doc.sensitivity ?? 'low',
    side_effects: doc.side_effects ?? false,
    parameters: doc.parameters,
    returns: doc.returns ?? null,
    policy: doc.policy ?? [],
    extensions,
  };
}
