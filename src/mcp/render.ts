import type { DescribedTool, DiscoverResult } from '../discovery/schemas.js';
import { notForSentence } from '../tools/formats.js';

function describeLines(tool: DescribedTool): string[] {
  const lines = [`${tool.card.summary}`];
  const guidance = notForSentence(tool.card.not_for);
  if (guidance) lines.push(guidance);
  if (tool.card.required_scopes.length > 0) lines.push(`Scopes: ${tool.card.required_scopes.join(', ')}`);
  lines.push(`Schema: ${JSON.stringify(tool.schema)}`);
  return lines;
}

/**
 * The text rendering of a find_tools result, for clients that show text only: one block per tool,
 * best first, each with its card essentials and its schema as compact JSON.
 */
export function renderShortlist(query: string, result: DiscoverResult): string {
  const head =
    result.tools.length === 0
      ? `No tool matches "${query}" (search: ${result.search_mode}).`
      : `${result.tools.length} tool${result.tools.length === 1 ? '' : 's'} for "${query}" (search: ${result.search_mode}; ${result.tokens.shortlist} of ${result.tokens.catalog} catalog tokens)${
          result.low_confidence ? '. Low confidence: none may fit; ask the user or search again with other words.' : '.'
        }`;
  const blocks = result.tools.map((tool, i) =>
    [`${i + 1}. ${tool.name} v${tool.version} (score ${tool.score.toFixed(3)})`, ...describeLines(tool).map((line) => `   ${line}`)].join('\n'),
  );
  return [head, ...blocks].join('\n\n');
}

/** The text rendering of a describe_tool result. */
export function renderDescription(tool: DescribedTool): string {
  return [`${tool.name} v${tool.version}`, ...describeLines(tool)].join('\n');
}
