import { Type } from 'typebox';

import { ToolView } from './model.js';
import { WARNING_CODES } from './warnings.js';

/**
 * The wire shapes around a stored tool (learned aliases, warnings, the publisher's view), shared by
 * every route that returns tools: they document the API and drive fast serialization. The tool's
 * own shapes (card, view, name) are in model.ts.
 */

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

const ToolWarning = Type.Object(
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

/** A tool as the /v1/tools routes answer it: the model's view, plus what publishers alone see. */
export const ToolViewReply = Type.Object(
  {
    ...ToolView.properties,
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
