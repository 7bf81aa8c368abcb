import type { DiscoverResponse } from '../../clients/typescript/src/index.js';
import { renderTable } from './table.js';

/** Human-readable shortlist: ranked table with scores, then search mode and token economics. */
export function formatDiscovery(query: string, result: DiscoverResponse, options: { schemas?: boolean } = {}): string {
  const lines: string[] = [];
  const count = result.tools.length;
  lines.push(`${count} tool${count === 1 ? '' : 's'} for "${query}"${result.low_confidence ? '  (low confidence)' : ''}`);
  lines.push('');
  if (count === 0) lines.push('  no tool passed the relevance floor; rephrase the request or check the token\'s scopes');
  else {
    lines.push(
      renderTable(
        ['#', 'tool', 'version', 'score', 'scopes', 'summary'],
        result.tools.map((t, i) => [String(i + 1), t.name, t.version, t.score.toFixed(3), t.card.required_scopes.join(' ') || '-', t.card.summary]),
        70,
      ).trimEnd(),
    );
  }
  const { shortlist, catalog } = result.tokens;
  const share = catalog > 0 ? ` (${((shortlist / catalog) * 100).toFixed(1)}% of the catalog's ${catalog.toLocaleString('en-US')})` : '';
  lines.push('');
  lines.push(`search mode: ${result.search_mode}`);
  lines.push(`tokens: shortlist ${shortlist.toLocaleString('en-US')}${share}`);
  lines.push(`discovery id: ${result.discovery_id}`);
  if (options.schemas) {
    for (const tool of result.tools) lines.push('', `# ${tool.name}`, JSON.stringify(tool.schema, null, 2));
  }
  return `${lines.join('\n')}\n`;
}
