import { Type } from 'typebox';

import { TOOL_NAME_PATTERN } from './document.js';
import { PolicyRuleSchema } from './policy-rule.js';
import { WARNING_CODES } from './warnings.js';

/**
 * The wire shapes of a stored tool (card, full view, learned aliases), shared by every route that
 * returns tools: they document the API and drive fast serialization.
 */

export const TokenCosts = Type.Object(
  { openai: Type.Integer(), 'openai-responses': Type.Integer(), anthropic: Type.Integer(), gemini: Type.Integer(), mcp: Type.Integer(), raw: Type.Integer() },
  { description: 'prompt tokens (o200k_base) of the full schema in each format' },
);

const JsonSchema = Type.Record(Type.String(), Type.Unknown());

const cardFields = {
  name: Type.String(),
  version: Type.String(),
  status: Type.Union([Type.Literal('active'), Type.Literal('retired')]),
  summary: Type.String(),
  not_for: Type.Union([Type.String(), Type.Null()]),
  aliases: Type.Array(Type.String()),
  examples: Type.Array(Type.String()),
  tags: Type.Array(Type.String()),
  category: Type.Union([Type.String(), Type.Null()]),
  required_scopes: Type.Array(Type.String()),
  sensitivity: Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')]),
  side_effects: Type.Boolean(),
  tokens: TokenCosts,
  updated_at: Type.String({ format: 'date-time' }),
};

export const ToolCard = Type.Object(cardFields, { $id: 'ToolCard' });

export const LearnedAlias = Type.Object({
  id: Type.Integer(),
  query: Type.String(),
  misses: Type.Integer({ description: 'discoveries that taught it, each counted once' }),
  support: Type.Integer({ description: 'distinct subjects who taught it within the TTL: what counts' }),
  taught_by: Type.Array(Type.Object({ subject: Type.String(), at: Type.String({ format: 'date-time' }) }), {
    description: 'who taught it, most recent first (each subject once, with its latest vote)',
  }),
  active: Type.Boolean({ description: 'ranks now: enough distinct subjects, not rejected, approved when the tool needs it' }),
  review: Type.Enum(['not_required', 'pending', 'approved', 'rejected'], {
    description: 'pending: the tool is high-sensitivity or side-effecting, so the alias ranks only once a publisher approves it',
  }),
  reviewed_by: Type.Union([Type.String(), Type.Null()]),
  reviewed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  first_seen: Type.String({ format: 'date-time' }),
  last_seen: Type.String({ format: 'date-time' }),
});

export const ToolWarning = Type.Object(
  {
    code: Type.Enum([...WARNING_CODES], { description: 'stable code; a tenant may refuse chosen codes (PUT /v1/settings warnings_as_errors)' }),
    pointer: Type.String({ description: 'JSON pointer into the tool document' }),
    message: Type.String(),
  },
  { description: 'what makes the tool harder to find or call; the tool is stored regardless' },
);

const warningsField = (description: string) => Type.Array(ToolWarning, { description });

/** `warnings` of a publish response, a dry run and a publisher's view: sorted by pointer, at most 100. */
export const toolWarningsField = warningsField('what makes the tool harder to find or call, sorted by pointer, at most 100 (docs/tools.md)');

export const ToolView = Type.Object(
  {
    ...cardFields,
    description: Type.String(),
    parameters: JsonSchema,
    returns: Type.Union([JsonSchema, Type.Null()]),
    policy: Type.Array(PolicyRuleSchema),
    revision: Type.Integer(),
    source: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: 'the catalog sync source that owns the tool (POST /v1/catalog/sync); null: published tool by tool' })),
    created_at: Type.String({ format: 'date-time' }),
    learned_aliases: Type.Optional(Type.Array(LearnedAlias, { description: 'publishers only' })),
    warnings: Type.Optional(warningsField('publishers only: what makes the tool harder to find or call, sorted by pointer, at most 100 (docs/tools.md)')),
    index_status: Type.Optional(
      Type.Enum(['pending', 'indexed', 'failed'], {
        description: 'publishers only: pending until the tool\'s vectors are current for the configured embedder (then it is searchable by meaning), failed while the last attempt failed (retried)',
      }),
    ),
  },
  { $id: 'ToolView', additionalProperties: true, description: 'the stored tool; x- extension fields are returned as sent' },
);

export const ToolName = Type.String({ pattern: TOOL_NAME_PATTERN });
