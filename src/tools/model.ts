/**
 * The tool's model: one TypeBox schema per shape, every type derived with `Static<>`, every
 * derived shape (card, view) built from the same field schemas rather than declared again.
 *
 * - `toolDocumentSchema(limits)`: what a publisher sends (optional fields, size limits, `x-` extensions);
 * - `ToolDocument`: what the registry stores, every default applied (`normalize.ts` maps one to the other);
 * - `ToolState`: what the registry adds (status, revision, token costs, timestamps);
 * - `ToolCard` and `ToolView`: the wire shapes built from the two above.
 *
 * `db/schema.ts` mirrors the migrations (it sits below this folder and cannot import it); the
 * assertions at the end keep its enums equal to the model's. The TypeScript client
 * (clients/typescript) is published on its own and keeps its own copy of these types.
 */
import { type Static, type TInteger, type TSchema, Type } from 'typebox';

import type { ToolRow } from '../db/schema.js';
import { type Format, FORMATS } from './formats.js';

/** Configurable size limits of a tool document. */
export interface DocumentLimits {
  descriptionLength: number;
  summaryLength: number;
  schemaDepth: number;
}

export const TOOL_NAME_PATTERN = '^[a-zA-Z][a-zA-Z0-9_.-]{0,63}$';
export const ToolName = Type.String({ pattern: TOOL_NAME_PATTERN });

/** A scope as tokens and documents spell it: printable ASCII, no spaces. */
export const Scope = Type.String({ pattern: '^[\\x21-\\x7E]{1,128}$' });

export const SENSITIVITIES = ['low', 'medium', 'high'] as const;
export const Sensitivity = Type.Enum([...SENSITIVITIES]);
export type Sensitivity = Static<typeof Sensitivity>;

const ToolStatus = Type.Enum(['active', 'retired']);
type ToolStatus = Static<typeof ToolStatus>;

const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

const JsonSchemaObject = Type.Record(Type.String(), Type.Unknown(), {
  description: 'A JSON Schema (draft 2020-12 or draft-07)',
});

/**
 * Argument-level rules that scopes cannot express ("refunds above 500 need billing:admin").
 * Deliberately tiny: conditions on JSON pointers into the call's arguments, all of which must
 * hold, and one effect. No expressions, no regular expressions, nothing Turing-complete.
 * `policy-rule.ts` checks what the shape cannot (exactly one effect, values fitting the operator).
 */
const PolicyCondition = Type.Object(
  {
    pointer: Type.String({ pattern: '^(/[^/]*)*$', maxLength: 256, description: 'JSON pointer into the arguments' }),
    op: Type.Enum(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in', 'exists', 'missing']),
    value: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);

export const PolicyRule = Type.Object(
  {
    id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    when: Type.Array(PolicyCondition, { minItems: 1, maxItems: 8, description: 'every condition must hold for the rule to apply' }),
    require_scopes: Type.Optional(Type.Array(Scope, { minItems: 1, maxItems: 16 })),
    deny: Type.Optional(Type.Literal(true)),
    message: Type.Optional(Type.String({ maxLength: 300 })),
  },
  { additionalProperties: false },
);
export type PolicyRule = Static<typeof PolicyRule>;
export type PolicyCondition = Static<typeof PolicyCondition>;

/**
 * The tool document publishers send. Unknown top-level fields are rejected (a typo such as
 * `require_scopes` must not silently publish a tool without scopes) except `x-` extensions.
 */
export function toolDocumentSchema(limits: DocumentLimits) {
  return Type.Object(
    {
      name: ToolName,
      version: Type.String({ minLength: 1, maxLength: 64, description: 'semver, e.g. 1.2.0' }),
      description: Type.String({ minLength: 1, maxLength: limits.descriptionLength }),
      summary: Type.Optional(Type.String({ minLength: 1, maxLength: limits.summaryLength })),
      not_for: Type.Optional(Type.String({ maxLength: 500 })),
      aliases: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 50 })),
      examples: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 50 })),
      tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 32 })),
      category: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      required_scopes: Type.Optional(Type.Array(Scope, { maxItems: 32 })),
      sensitivity: Type.Optional(Sensitivity),
      side_effects: Type.Optional(Type.Boolean()),
      parameters: JsonSchemaObject,
      returns: Type.Optional(JsonSchemaObject),
      policy: Type.Optional(Type.Array(PolicyRule, { maxItems: 32, description: 'argument-level rules checked by /v1/authorize' })),
    },
    { additionalProperties: false, patternProperties: { '^x-': Type.Unknown() } },
  );
}
export type ToolDocumentInput = Static<ReturnType<typeof toolDocumentSchema>>;

/** A validated document with every default applied: what the registry stores. */
export const ToolDocument = Type.Object({
  name: Type.String(),
  version: Type.String(),
  description: Type.String(),
  summary: Type.String(),
  not_for: nullable(Type.String()),
  aliases: Type.Array(Type.String()),
  examples: Type.Array(Type.String()),
  tags: Type.Array(Type.String()),
  category: nullable(Type.String()),
  required_scopes: Type.Array(Type.String()),
  sensitivity: Sensitivity,
  side_effects: Type.Boolean(),
  parameters: JsonSchemaObject,
  returns: nullable(JsonSchemaObject),
  policy: Type.Array(PolicyRule),
  /** The publisher's `x-` fields, kept apart and returned as sent. */
  extensions: Type.Record(Type.String(), Type.Unknown()),
});
export type ToolDocument = Static<typeof ToolDocument>;

/** Prompt tokens of the full schema in each rendering format. */
export const TokenCosts = Type.Object(Object.fromEntries(FORMATS.map((format) => [format, Type.Integer()])) as Record<Format, TInteger>, {
  description: 'prompt tokens (o200k_base) of the full schema in each format',
});
export type TokenCosts = Static<typeof TokenCosts>;

/** What the registry adds to a stored document. */
const ToolState = Type.Object({
  status: ToolStatus,
  revision: Type.Integer(),
  /** The catalog sync source that owns the tool (migration 0019); null: published tool by tool. */
  source: Type.Union([Type.String(), Type.Null()], { description: 'the catalog sync source that owns the tool (POST /v1/catalog/sync); null: published tool by tool' }),
  tokens: TokenCosts,
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
});

const document = ToolDocument.properties;
const state = ToolState.properties;

// The wire shapes pick their fields from the two schemas above, in the order the API has always
// written them (fast-json-stringify writes properties in schema order).

/** The light card: what a listing or a discovery result shows about a tool. */
export const ToolCard = Type.Object(
  {
    name: document.name,
    version: document.version,
    status: state.status,
    summary: document.summary,
    not_for: document.not_for,
    aliases: document.aliases,
    examples: document.examples,
    tags: document.tags,
    category: document.category,
    required_scopes: document.required_scopes,
    sensitivity: document.sensitivity,
    side_effects: document.side_effects,
    tokens: state.tokens,
    updated_at: state.updated_at,
  },
  { $id: 'ToolCard' },
);
export type ToolCard = Static<typeof ToolCard>;

/** The full stored tool: the document (its `x-` fields at the top level), its state and token costs. */
export const ToolView = Type.Object(
  {
    ...ToolCard.properties,
    description: document.description,
    parameters: document.parameters,
    returns: document.returns,
    policy: document.policy,
    revision: state.revision,
    source: Type.Optional(state.source),
    created_at: state.created_at,
  },
  { additionalProperties: true },
);
export type ToolView = Static<typeof ToolView> & Record<`x-${string}`, unknown>;

// db/schema.ts spells the enums for drizzle (it mirrors the migrations' CHECK constraints):
// compilation fails here if they drift from the model's.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type RowEnumsMatchModel = [Same<ToolRow['sensitivity'], Sensitivity>, Same<ToolRow['status'], ToolStatus>] extends [true, true] ? true : never;
const rowEnumsMatch: RowEnumsMatchModel = true;
void rowEnumsMatch;
