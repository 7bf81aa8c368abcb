/**
 * The naive alternative from the design note: an in-process loop counting the query words each
 * tool's name and description contain. Used as the baseline of the eval and bench reports.
 */

export interface KeywordTool {
  name: string;
  description: string;
}

const words = (text: string): string[] => text.toLowerCase().match(/[a-z0-9]+/g) ?? [];

/** Tool names ordered by how many distinct query words they contain (ties by name). */
export function keywordOverlapRank(query: string, tools: KeywordTool[], limit: number): string[] {
  const queryWords = new Set(words(query));
  return tools
    .map((tool) => {
      const toolWords = new Set(words(`${tool.name} ${tool.description}`));
      let overlap = 0;
      for (const word of queryWords) if (toolWords.has(word)) overlap += 1;
      return { name: tool.name, overlap };
    })
    .filter((t) => t.overlap > 0)
    .sort((a, b) => b.overlap - a.overlap || (a.name < b.name ? -1 : 1))
    .slice(0, limit)
    .map((t) => t.name);
}
