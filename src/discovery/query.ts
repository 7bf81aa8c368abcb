import { type Static, Type } from 'typebox';

import type { ErrorDetail } from '../errors.js';
import { type Format, strictOptionProblem } from '../tools/formats.js';
import { expandIdentifiers } from '../tools/lexical/search-text.js';
import { TOOL_NAME_PATTERN } from '../tools/model.js';
import { textProblems } from '../tools/validation.js';

/** Which part of a long request the search used. */
const SEARCHED_PARTS = ['whole', 'last_user_turn', 'head_and_tail'] as const;
type SearchedPart = (typeof SEARCHED_PARTS)[number];


/** A request prepared for both retrieval legs. */
export interface PreparedQuery {
  /** What the search uses of the request, whitespace-normalized: embedded as is. */
  text: string;
  /** The text the lexical leg tokenizes: identifiers also split into words. */
  lexicalText: string;
  /**
   * The request without its quoted values (`named "Q3 report"`): what the tool must do rather
   * than the arguments it will get. Embedded instead of `text`, and its words weigh fully in the
   * lexical leg where words found only inside quotes weigh QUOTED_WORD_WEIGHT (tools/lexical/bm25f.ts).
   */
  intentText: string;
  /** `intentText` as the lexical leg tokenizes it. */
  lexicalIntentText: string;
  /** Lower-cased identifier-shaped tokens that could be a tool's exact name. */
  nameTokens: string[];
  searched: SearchedQuery;
  /** The steps of a request that names several in sequence ("create X, then list Y"), each prepared alone; empty for one step. */
  steps: PreparedQuery[];
}

/**
 * Most characters of a request the search uses. A longer request (a pasted conversation, a log)
 * is accepted whole and searched by its bounded part: embedding time grows with the text, and
 * every further word costs the lexical leg one more posting range.
 */
export const SEARCHED_QUERY_CHARS = 1000;

/** What the search used of the request: all of it, or a bounded part (response field `searched_query`). */
export const SearchedQuery = Type.Object(
  {
    bounded: Type.Boolean({ description: 'true when the search used only part of the request' }),
    part: Type.Enum([...SEARCHED_PARTS], {
      description: 'whole; the last user turn of a pasted conversation; or the head and tail of any other long text',
    }),
    chars: Type.Integer({ description: 'characters searched (whitespace collapsed)' }),
    total_chars: Type.Integer({ description: 'characters of the whole request (whitespace collapsed)' }),
  },
  { description: `what the search used of the request (extension): at most ${SEARCHED_QUERY_CHARS} characters` },
);
export type SearchedQuery = Static<typeof SearchedQuery>;

// A tool name is a whole word of the request: a run between spaces, commas, semicolons, pipes, an
// opening parenthesis ("get_weather(city='Paris')") or CJK text and punctuation, with quotes,
// brackets, Markdown emphasis, closing punctuation and a possessive ("get_weather's") trimmed.
// A piece of a longer value is an argument, not a name: "sha256" in the hash "sha256:9f2c…" or
// "search_orders" in a URL path named tools that way once and won outright (score 1).
const NAME_RUN = /[^\s,;(|，、。；：（）「」『』【】\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]+/gu;
const NAME_TOKEN = new RegExp(TOOL_NAME_PATTERN);
const NAME_TRIM = /^["'“‘„«`[{<*_]+|(?:['’]s)?["'”’“‘»`)\]}>.:!?…*-]*$/g;
// A name is at most 64 characters: a longer run is a value, and trimming it costs more than it is worth.
const NAME_RUN_CHARS = 100;
// Only identifier-shaped tokens (search_orders, getWeather, s3.put) count as naming a tool: a plain
// word such as "calculator" is too often just a word (measured: matching those hurt MRR).
const IDENTIFIER_SHAPE = /[_.\-\d]|[a-z][A-Z]/;
// A speaker label opening a line of a pasted transcript: "User:", "Human:", "Customer >", "[user]".
const TURN = /^[ \t]*\[?(user|human|customer|client|me|you|assistant|ai|bot|agent|model|system|tool)\]?[ \t]*[:>]/gim;
const USER_ROLES = new Set(['user', 'human', 'customer', 'client', 'me']);
const REPLY_ROLES = new Set(['assistant', 'ai', 'bot', 'agent', 'model']);

const normalize = (text: string): string => text.replace(/\s+/g, ' ').trim();

// A quoted span: double, typographic or back quotes anywhere; single quotes only where they cannot
// be an apostrophe (not between two letters or digits: "Bob's 'Q3 report'").
const QUOTED_VALUE = /"[^"]*"|“[^”]*”|‘[^’]*’|`[^`]*`|(?<![\p{L}\p{N}])'[^']*'(?![\p{L}\p{N}])/gu;
const HAS_WORD = /[\p{L}\p{N}]/u;

/**
 * The request without its quoted spans. Requests quote the values a tool will be called with
 * (titles, file names, search terms, message bodies), and those words describe the arguments, not
 * the tool: "create a note titled 'Meeting minutes'" must find a note tool, not a meeting one.
 * A request that is nothing but quotes keeps its text.
 */
export function withoutQuotedValues(text: string): string {
  const rest = normalize(text.replace(QUOTED_VALUE, ' '));
  return HAS_WORD.test(rest) ? rest : text;
}

/**
 * The part of a request worth searching. A pasted conversation, at any length, is searched by its
 * last user turn (what the agent must act on now; earlier turns are requests already served); any
 * other long text by its head and tail, where requests put the ask ("Summarize this: …", "… why
 * does this fail?"). A short text counts as a conversation only with a reply's label (Assistant,
 * AI, Bot, …) besides a user's, so a request that merely opens with "User:" is searched whole.
 */
export function boundedPart(raw: string, limit = SEARCHED_QUERY_CHARS): { text: string; part: SearchedPart } {
  const whole = normalize(raw);
  const turns = [...raw.matchAll(TURN)];
  const roles = turns.map((m) => m[1]!.toLowerCase());
  const lastUser = turns.filter((_, i) => USER_ROLES.has(roles[i]!)).at(-1);
  if (lastUser && turns.length >= 2 && (whole.length > limit || roles.some((role) => REPLY_ROLES.has(role)))) {
    const next = turns.find((m) => m.index > lastUser.index);
    const turn = normalize(raw.slice(lastUser.index + lastUser[0].length, next?.index ?? raw.length));
    if (turn !== '') return { text: headAndTail(turn, limit), part: 'last_user_turn' };
  }
  return whole.length <= limit ? { text: whole, part: 'whole' } : { text: headAndTail(whole, limit), part: 'head_and_tail' };
}

/** The first and last halves of `text` within `limit` characters, cut at spaces. */
function headAndTail(text: string, limit: number): string {
  if (text.length <= limit) return text;
  const half = Math.floor((limit - 1) / 2);
  const head = text.slice(0, half).replace(/\s+\S*$/, '');
  const tail = text.slice(-half).replace(/^\S*\s+/, '');
  return `${head} ${tail}`;
}

// Where a request moves to its next step: sequencing words, never a bare "and" ("search and
// replace" is one step) nor a sentence end (a first sentence is as often context: "I'm hungry.").
const STEP_BREAK = /[,;.]?\s+(?:and\s+)?(?:then|after\s+that|afterwards|finally|additionally)\b,?/gi;
/** Most steps searched apart: each costs one more retrieval. */
export const MAX_STEPS = 4;
const MIN_STEP_WORDS = 3;

/**
 * The steps a request names in sequence ("Create a note, then list my tags and finally check the
 * setup"): each step's words pick a different tool, and searched whole the request favours a tool
 * matching a little of every step over the one that does each. Steps too short to stand alone
 * ("then do it") stay with the step before. One step (most requests) gives an empty list.
 */
export function requestSteps(text: string): string[] {
  const steps: string[] = [];
  for (const piece of text.split(STEP_BREAK)) {
    const step = normalize(piece ?? '');
    if (step === '') continue;
    const words = step.match(/[\p{L}\p{N}]+/gu)?.length ?? 0;
    if (words < MIN_STEP_WORDS && steps.length > 0) steps[steps.length - 1] += ` ${step}`;
    else steps.push(step);
  }
  return steps.length >= 2 && steps.length <= MAX_STEPS ? steps : [];
}

/** Why a request cannot be searched (blank, or text PostgreSQL cannot store), or undefined. */
function queryProblem(query: string): string | undefined {
  if (query.trim() === '') return 'must contain some text';
  return textProblems(query)[0]?.message;
}

/**
 * THE input check of a discovery, whatever the door (REST /v1/discover, MCP find_tools): the
 * request must hold some text, and neither it nor any filter may hold text PostgreSQL cannot
 * store, since both are written to the discovery log (a lone surrogate in an MCP filter tag
 * once emptied the log for every tenant). Pointers are into the request body.
 */
export function discoverInputProblems(input: { query: string; format: Format; strict?: boolean | undefined; filters?: Record<string, unknown> | undefined }): ErrorDetail[] {
  const problem = queryProblem(input.query);
  const strict = strictOptionProblem(input.format, input.strict);
  return [
    ...(problem ? [{ pointer: '/query', message: problem }] : []),
    ...(strict ? [{ pointer: '/strict', message: strict }] : []),
    ...textProblems(input.filters ?? {}, '/filters'),
  ].map((detail) => ({ ...detail, in: 'body' as const }));
}

/** Normalizes a request (Unicode NFC, collapsed whitespace, bounded length) and derives what each leg needs, for it and each of its steps. */
export function prepareQuery(query: string, limit = SEARCHED_QUERY_CHARS): PreparedQuery {
  const whole = prepareText(query, limit);
  return { ...whole, steps: requestSteps(whole.text).map((step) => prepareText(step, limit)) };
}

function prepareText(query: string, limit: number): PreparedQuery {
  const nfc = query.normalize('NFC');
  const total = normalize(nfc).length;
  const { text, part } = boundedPart(nfc, limit);
  const tokens = (text.match(NAME_RUN) ?? []).filter((run) => run.length <= NAME_RUN_CHARS).map((run) => run.replace(NAME_TRIM, ''));
  const nameTokens = [...new Set(tokens.filter((t) => NAME_TOKEN.test(t) && IDENTIFIER_SHAPE.test(t)).map((t) => t.toLowerCase()))];
  const intentText = withoutQuotedValues(text);
  return {
    text,
    lexicalText: expandIdentifiers(text),
    intentText,
    lexicalIntentText: expandIdentifiers(intentText),
    nameTokens,
    searched: { bounded: part !== 'whole', part, chars: text.length, total_chars: total },
    steps: [],
  };
}
