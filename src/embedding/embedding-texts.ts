// What is embedded for a tool, one vector per text (the lexical index's texts: src/tools/lexical/search-text.ts).

import { ownSummary, splitIdentifier } from '../tools/lexical/search-text.js';

/** The card fields that are embedded. */
export interface EmbeddableCard {
  name: string;
  summary: string;
  description: string;
  aliases: string[];
  examples: string[];
  /** Parameter names (split) and descriptions as the lexical index holds them; empty without parameters. */
  parameters?: string;
  /** Queries learned from agents' calls (see src/learning). */
  learned?: string[];
}

/**
 * Bumped whenever what is embedded changes, so stored vectors count as stale and are recomputed
 * in the background (the old ones serve until then).
 */
export const CARD_TEXTS_VERSION = 'params-1';

/** Most characters of the parameter text embedded (the encoder reads the start of long texts best). */
const PARAMETER_TEXT_CHARS = 600;

/**
 * Texts embedded for one tool, in `ord` order: the card itself (name words, then the
 * description, prefixed by the summary when the publisher wrote one of its own); what the tool
 * takes (name words, then its parameters' names and descriptions), when it has parameters, so a
 * request that carries an argument ("order #94218") finds the tool that takes it; then one text
 * per alias, example and learned query, so a request phrased like any of them finds the tool
 * (max similarity).
 */
export function cardEmbeddingTexts(card: EmbeddableCard): string[] {
  const summary = ownSummary(card);
  const name = splitIdentifier(card.name);
  const parameters = card.parameters?.trim() ? [`${name}: ${card.parameters.trim().slice(0, PARAMETER_TEXT_CHARS)}`] : [];
  return [`${name}: ${summary ? `${summary} ` : ''}${card.description}`, ...parameters, ...card.aliases, ...card.examples, ...(card.learned ?? [])];
}
