/**
 * The floor every ranking must clear: plain BM25 over a tool's name and description, the naive
 * keyword search a user could write in 30 lines (../shared/bench/README.md): lower-cased words,
 * camelCase and snake_case split, no stemming, k1 1.2, b 0.75. Used by the eval and bench reports.
 */

interface FloorTool {
  name: string;
  description: string;
}

const K1 = 1.2;
const B = 0.75;

/** Lower-cased words with camelCase split (snake_case and other separators split by the pattern). */
export function floorWords(text: string): string[] {
  return text.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

/** A BM25 index over tool names and descriptions; `rank` answers a request with tool names, best first. */
export class PlainBm25 {
  private readonly frequencies: Map<string, number>[];
  private readonly lengths: number[];
  private readonly documentFrequency = new Map<string, number>();
  private readonly averageLength: number;

  constructor(private readonly tools: readonly FloorTool[]) {
    const documents = tools.map((tool) => floorWords(`${tool.name} ${tool.description}`));
    this.lengths = documents.map((words) => words.length);
    this.frequencies = documents.map((words) => {
      const counts = new Map<string, number>();
      for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
      for (const word of counts.keys()) this.documentFrequency.set(word, (this.documentFrequency.get(word) ?? 0) + 1);
      return counts;
    });
    this.averageLength = this.lengths.reduce((sum, n) => sum + n, 0) / Math.max(documents.length, 1);
  }

  /** Names of the `limit` best-scoring tools (ties by catalog order); tools matching no word are left out. */
  rank(query: string, limit: number): string[] {
    const n = this.tools.length;
    const words = [...new Set(floorWords(query))];
    const scored: { index: number; score: number }[] = [];
    this.frequencies.forEach((counts, index) => {
      let score = 0;
      for (const word of words) {
        const tf = counts.get(word);
        if (!tf) continue;
        const df = this.documentFrequency.get(word)!;
        const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
        score += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * this.lengths[index]!) / this.averageLength));
      }
      if (score > 0) scored.push({ index, score });
    });
    return scored
      .sort((a, b) => b.score - a.score || a.index - b.index)
      .slice(0, limit)
      .map(({ index }) => this.tools[index]!.name);
  }
}
