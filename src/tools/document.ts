import { type Static, Type } from 'typebox';

import { type PolicyRule, PolicyRuleSchema } from './policy-rule.js';

/** Configurable size limits of a tool document. */
export interface DocumentLimits {
  descriptionLength: number;
  summaryLength: number;
  schemaDepth: number;
}

export const TOOL_NAME_PATTERN = '^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$';

const JsonSchemaObject = Type.Record(Type.String(), Type.Unknown(), {
  description: 'A JSON Schema (draft 2020-12 or draft-07)',
});

/**
 * The tool document publishers send. Unknown top-level fields are rejected (a typo such as
 * `require_scopes` must not silently publish a tool without scopes) except `x-` extensions.
 */
export function toolDocumentSchema(limits: DocumentLimits) {
  return Type.Object(
    {
      name: Type.String({ pattern: TOOL_NAME_PATTERN }),
      version: Type.String({ minLength: 1, maxLength: 64, description: 'semver, e.g. 1.2.0' }),
      description: Type.String({ minLength: 1, maxLength: limits.descriptionLength }),
      summary: Type.Optional(Type.String({ minLength: 1, maxLength: limits.summaryLength })),
      not_for: Type.Optional(Type.String({ maxLength: 500 })),
      aliases: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 50 })),
      examples: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 50 })),
      tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32 })),
      category: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      required_scopes: Type.Optional(Type.Array(Type.String({ pattern: '^[\\x21-\\x7E]{1,128}$' }), { maxItems: 32 })),
      sensitivity: Type.Optional(Type.Enum(['low', 'medium', 'high'])),
      side_effects: Type.Optional(Type.Boolean()),
      parameters: JsonSchemaObject,
      returns: Type.Optional(JsonSchemaObject),
      policy: Type.Optional(Type.Array(PolicyRuleSchema, { maxItems: 32, description: 'argument-level rules checked by /v1/authorize' })),
    },
    { additionalProperties: false, patternProperties: { '^x-': Type.Unknown() } },
  );
}

export type ToolDocumentInput = Static<ReturnType<typeof toolDocumentSchema>>;

/** A validated document with every default applied: what the registry stores. */
export interface ToolDocument {
  name: string;
  version: string;
  description: string;
  summary: string;
  not_for: string | null;
  aliases: string[];
  examples: string[];
  tags: string[];
  category: string | null;
  required_scopes: string[];
  sensitivity: 'low' | 'medium' | 'high';
  side_effects: boolean;
  parameters: Record<string, unknown>;
  returns: Record<string, unknown> | null;
  policy: PolicyRule[];
  extensions: Record<string, unknown>;
}
