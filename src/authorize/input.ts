import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';

import type { ErrorDetail } from '../errors.js';
import { ajvErrorsToDetails } from '../tools/json-schema.js';
import { textProblems } from '../tools/validation.js';
import { AuthorizeBody } from './schemas.js';

/**
 * The input check of an authorize request, whichever door it came through: POST /v1/authorize,
 * POST /v1/call and MCP call_tool. The route's schema (checked by Fastify before the service on
 * REST), then what no schema says: a NUL or an unpaired surrogate reads differently to every parser
 * (a gateway may drop it, so "root\ud800" would pass an `in ["root"]` rule and run as root), and in
 * a key it would reach the audit entry's pointers, which PostgreSQL cannot store.
 */
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats.default(ajv);
const shape = ajv.compile(AuthorizeBody);

/** What is wrong with an authorize request, as JSON pointers into its body; empty when it may be decided. */
export function authorizeInputProblems(input: unknown): ErrorDetail[] {
  if (!shape(input)) return ajvErrorsToDetails(shape.errors).map((detail) => ({ ...detail, in: 'body' as const }));
  return textProblems(input.arguments, '/arguments', { controls: false }).map((detail) => ({ ...detail, in: 'body' as const }));
}
