// What the lexical index reads of a tool (its weighted search texts) and the identifier splitting
// queries share with it. The texts are the tool's search_* columns, weighted A to D into the
// generated tools.tsv (migrations/0003_authorize.sql), which postings.ts turns into postings.
// What is embedded is src/embedding/embedding-texts.ts.

import type { ToolDocument } from '../model.js';

/**
 * Splits identifiers into words so the text index sees what users type:
 * `getWeatherForecast` -> "get weather forecast", `PDF_URLTool` -> "pdf url tool",
 * `billing.issue_refund2` -> "billing issue refund 2".
 */
export function splitIdentifier(identifier: string): string {
  return identifier
    .replace(/([a-z\d])([A-Z])/g, '$1 $2')
    // An acronym's last capital before a capitalized word; a lookahead, so linear (([A-Z]+)([A-Z][a-z]) was quadratic on a long run of capitals).
    .replace(/([A-Z])(?=[A-Z][a-z])/g, '$1 ')
    .replace(/([a-zA-Z])(\d)/g, '$1 $2')
    .replace(/(\d)([a-zA-Z])/g, '$1 $2')
    .replace(/[_.\-/:]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
}

/** Free text with every identifier-looking token also split, keeping the original token. */
export function expandIdentifiers(text: string): string {
  return text.replace(/[A-Za-z][\w.:-]*[_.:A-Z-][\w.:-]*/g, (token) => {
    const split = splitIdentifier(token);
    return split === token.toLowerCase() ? token : `${token} ${split}`;
  });
}

/** The four weighted texts of a tool's card (weights A to D): name and aliases, summary/tags/category, description/examples, parameters. */
interface SearchTexts {
  name: string;
  card: string;
  body: string;
  params: string;
}

type JsonObject = Record<string, unknown>;
const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Parameter names (split) and descriptions, nested objects included, bounded in size. */
export function parameterText(schema: JsonObject, limit = 4000): string {
  const parts: string[] = [];
  const stack: JsonObject[] = [schema];
  while (stack.length > 0 && parts.join(' ').length < limit) {
    const node = stack.pop()!;
    if (isObject(node.properties)) {
      for (const [name, property] of Object.entries(node.properties)) {
        parts.push(splitIdentifier(name));
        if (isObject(property)) {
          if (typeof property.description === 'string') parts.push(property.description);
          stack.push(property);
          if (isObject(property.items)) stack.push(property.items);
        }
      }
    }
  }
  return parts.join(' ').slice(0, limit);
}

/**
 * The summary when the publisher wrote one of its own; null when it merely repeats the start of
 * the description (derived summaries), which would count the same words twice.
 */
export function ownSummary(doc: Pick<ToolDocument, 'summary' | 'description'>): string | null {
  const stem = doc.summary.replace(/…$/, '');
  return doc.description.replace(/\s+/g, ' ').startsWith(stem) ? null : doc.summary;
}

/** Builds the indexed card texts of a document. */
export function searchTexts(doc: ToolDocument): SearchTexts {
  return {
    // Aliases are users' own words for the tool: they weigh like its name.
    name: [splitIdentifier(doc.name), ...doc.aliases].join(' \n '),
    card: [ownSummary(doc) ?? '', ...doc.tags.map(splitIdentifier), doc.category ? splitIdentifier(doc.category) : '']
      .filter(Boolean)
      .join(' \n '),
    body: [doc.description, ...doc.examples].join(' \n '),
    params: parameterText(doc.parameters),
  };
}
