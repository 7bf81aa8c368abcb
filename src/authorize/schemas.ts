import { Type } from 'typebox';

import { ToolName } from '../tools/model.js';

/** The shapes of POST /v1/authorize: the route validates and documents them, the service's types derive from them. */

/** What a gateway asks. */
export const AuthorizeBody = Type.Object(
  {
    tool: ToolName,
    version: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'pin: deny unless this is the current version' })),
    arguments: Type.Record(Type.String(), Type.Unknown(), { description: 'the call\'s arguments, validated against the tool\'s parameters' }),
    discovery_id: Type.Optional(Type.String({ format: 'uuid', description: 'the discovery that offered the tool, if any' })),
  },
  { additionalProperties: false },
);

/** Why a call is denied. */
export const Reason = Type.Object({
  code: Type.Enum(['unknown_tool', 'retired', 'version_mismatch', 'invalid_arguments', 'policy_denied']),
  message: Type.String(),
  pointer: Type.Optional(Type.String()),
});

/** The decision. */
export const AuthorizeResponse = Type.Object({
  decision: Type.Enum(['allow', 'deny']),
  reasons: Type.Array(Reason),
  tool: Type.Object({ name: Type.String(), version: Type.Union([Type.String(), Type.Null()]) }),
  arguments: Type.Optional(
    Type.Record(Type.String(), Type.Unknown(), {
      description:
        'present when allowed arguments were read differently from what was sent: the nulls an OpenAI strict-mode call gives for optional properties the schema does not let be null, dropped as absent. Run the tool with these',
    }),
  ),
});
