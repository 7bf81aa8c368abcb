import { ownSummary, splitIdentifier } from '../tools/card-text.js';

/** The card fields that are embedded. */
export interface EmbeddableCard {
  name: string;
  summary: string;
  description: string;
  aliases: string[];
  examples: string[];
  /** Queries learned from agents' calls (see src/learning). */
  learned?: string[];
}

/**
 * Texts embedded for one tool, in `ord` order: the card itself (name words, then the
 * description, prefixed by the summary when the publisher wrote one of its own), then one text per
 * alias, example and learned query, so a request phrased like any of them finds the tool (max
 * similarity).
 */
export function cardEmbeddingTexts(card: EmbeddableCard): string[] {
  const summary = ownSummary(card);
  return [`${splitIdentifier(card.name)}: ${summary ? `${summary} ` : ''}${card.description}`, ...card.aliases, ...card.examples, ...(card.learned ?? [])];
}
