import { type Static, Type } from 'typebox';

import { FORMATS } from '../tools/formats.js';
import { ToolCard } from '../tools/model.js';
import { RANKING_MODES } from './fusion.js';
import { SEARCHED_QUERY_CHARS, SearchedQuery } from './query.js';

/**
 * The shapes of discovery, written once: POST /v1/discover validates and serializes with them, the
 * service's input and result types are derived from them, and MCP's find_tools reuses the fields.
 */

/** The request fields every discovery surface shares (REST body, MCP find_tools). */
export const discoverFields = {
  query: Type.String({
    minLength: 1,
    description: `the user's request, in their words; any length up to the body limit (a longer one is searched by its bounded part of ${SEARCHED_QUERY_CHARS} characters, see searched_query)`,
  }),
  top_k: Type.Integer({ minimum: 1, maximum: 10, default: 3, description: 'how many tools to return, best first' }),
  filters: Type.Optional(
    Type.Object(
      {
        category: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32, description: 'a tool matches when it has any of them' })),
      },
      { additionalProperties: false },
    ),
  ),
};

/** `format`, with the default of the surface that offers it. */
export const formatField = (fallback: (typeof FORMATS)[number]) =>
  Type.Enum([...FORMATS], { default: fallback, description: 'tool-definition format of the returned schemas' });

/** `strict`: OpenAI's strict rendering of the parameters (formats openai and openai-responses). */
export const strictField = Type.Optional(
  Type.Boolean({
    description:
      "openai and openai-responses only: rewrite each schema into OpenAI's strict subset and send strict: true (optional properties become nullable; /v1/authorize reads their null as absent). A schema with no strict form comes as usual, with strict: false and strict_fallback",
  }),
);

export const DiscoverBody = Type.Object(
  {
    query: discoverFields.query,
    top_k: discoverFields.top_k,
    format: formatField('openai'),
    strict: strictField,
    mode: Type.Enum([...RANKING_MODES], {
      default: 'hybrid',
      description: 'retrieval legs to rank with (extension; hybrid is what agents should use)',
    }),
    filters: discoverFields.filters,
  },
  { additionalProperties: false },
);
/** A discovery request with the defaults applied. */
export type DiscoverInput = Static<typeof DiscoverBody>;

export const DiscoveredTool = Type.Object({
  name: Type.String(),
  version: Type.String(),
  score: Type.Number({ description: 'calibrated estimate that the tool fits the request' }),
  card: ToolCard,
  schema: Type.Record(Type.String(), Type.Unknown(), { description: 'the full schema in the requested format' }),
  strict_fallback: Type.Optional(Type.String({ description: 'strict was asked and this schema has no strict form: why (the schema is the usual rendering, strict: false)' })),
});
export type DiscoveredTool = Static<typeof DiscoveredTool>;

/** One tool by name, as MCP describe_tool answers it: a discovered tool without a score. */
export const DescribedTool = Type.Omit(DiscoveredTool, ['score']);
export type DescribedTool = Static<typeof DescribedTool>;

export const DiscoverResponse = Type.Object({
  discovery_id: Type.String({ format: 'uuid' }),
  tools: Type.Array(DiscoveredTool),
  tokens: Type.Object({
    shortlist: Type.Integer({ description: 'prompt tokens this shortlist adds' }),
    catalog: Type.Integer({ description: 'prompt tokens of every tool the caller may use, in this format' }),
  }),
  low_confidence: Type.Boolean(),
  search_mode: Type.Enum([...RANKING_MODES], { description: 'the legs that ranked: lexical when the embedder is disabled or unavailable' }),
  searched_query: SearchedQuery,
});
export type DiscoverResult = Static<typeof DiscoverResponse>;
