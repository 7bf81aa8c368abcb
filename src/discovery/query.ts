import { expandIdentifiers } from '../tools/card-text.js';

/** A request prepared for both retrieval legs. */
export interface PreparedQuery {
  /** What the user wrote, whitespace-normalized: embedded as is. */
  text: string;
  /** The text the lexical leg tokenizes: identifiers also split into words. */
  lexicalText: string;
  /** Lower-cased identifier-shaped tokens that could be a tool's exact name. */
  nameTokens: string[];
}

const NAME_TOKEN = /[A-Za-z][A-Za-z0-9_.-]{0,63}/g;
// Only identifier-shaped tokens (search_orders, getWeather, s3.put) count as naming a tool: a plain
// word such as "calculator" is too often just a word (measured: matching those hurt MRR).
const IDENTIFIER_SHAPE = /[_.\-\d]|[a-z][A-Z]/;

/** Normalizes a request (Unicode NFC, collapsed whitespace) and derives what each leg needs. */
export function prepareQuery(query: string): PreparedQuery {
  const text = query.normalize('NFC').replace(/\s+/g, ' ').trim();
  const tokens = (text.match(NAME_TOKEN) ?? []).map((t) => t.replace(/[.-]+$/, ''));
  const nameTokens = [...new Set(tokens.filter((t) => IDENTIFIER_SHAPE.test(t)).map((t) => t.toLowerCase()))];
  return { text, lexicalText: expandIdentifiers(text), nameTokens };
}
