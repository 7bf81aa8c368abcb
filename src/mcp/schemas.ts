import { type Static, type TSchema, Type } from 'typebox';
import * as z from 'zod';

import { DescribedTool, discoverFields, DiscoverResponse, formatField, strictField } from '../discovery/schemas.js';

/**
 * The MCP tools' schemas, derived from the TypeBox schemas of the REST routes: find_tools takes
 * /v1/discover's fields (formats default to MCP's own, no ranking mode) and answers its response;
 * describe_tool answers one discovered tool without a score.
 */

/** The zod schema the MCP SDK validates with, converted from the JSON Schema the routes use. */
function zodOf<T extends TSchema>(schema: T): z.ZodType<Static<T>> {
  // The JSON Schema as the routes publish it (TypeBox's symbols dropped). Same schema, so what zod
  // accepts is what Static<T> describes, defaults applied.
  const published: z.core.JSONSchema.JSONSchema = JSON.parse(JSON.stringify(schema));
  return z.fromJSONSchema(published) as z.ZodType<Static<T>>;
}

export const FindToolsInput = zodOf(Type.Object({ query: discoverFields.query, top_k: discoverFields.top_k, format: formatField('mcp'), strict: strictField, filters: discoverFields.filters }, { additionalProperties: false }));
export const FindToolsOutput = zodOf(DiscoverResponse);

export const DescribeToolInput = zodOf(
  Type.Object({ name: Type.String({ minLength: 1, maxLength: 64, description: 'the tool name, as find_tools returned it' }), format: formatField('mcp'), strict: strictField }, { additionalProperties: false }),
);
export const DescribeToolOutput = zodOf(DescribedTool);

export const CallToolInput = zodOf(
  Type.Object(
    {
      name: Type.String({ minLength: 1, maxLength: 64, description: 'the tool name, as find_tools returned it' }),
      arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "the call's arguments, checked against the tool's schema" })),
    },
    { additionalProperties: false },
  ),
);
