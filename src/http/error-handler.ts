import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

import { hasErrorCode, isCancelled, isConnectionError } from '../db/connection-errors.js';
import { AppError, type ErrorCode, type ErrorDetail, statusOf } from '../errors.js';

/** The wire shape of every error. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details: ErrorDetail[]; request_id: string };
}

type ValidationContext = NonNullable<ErrorDetail['in']>;

// Fastify's own failures (parsing, limits) mapped to our codes; anything else 5xx is hidden.
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'bad_request',
  FST_ERR_CTP_INVALID_JSON_BODY: 'bad_request',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'bad_request',
};

// Text PostgreSQL cannot store (NUL, unpaired surrogates in jsonb): the input's fault, not ours.
const UNSTORABLE_TEXT_CODES = new Set(['22P05', '22021']);

/** Converts anything thrown into the contract's error body. */
export function toAppError(error: FastifyError | Error): AppError {
  if (error instanceof AppError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const where = (fastifyError.validationContext ?? 'body') as ValidationContext;
    const details = fastifyError.validation.map((v) => {
      let pointer = v.instancePath;
      const params = v.params as Record<string, unknown>;
      if (v.keyword === 'required') pointer += `/${String(params.missingProperty)}`;
      if (v.keyword === 'additionalProperties') pointer += `/${String(params.additionalProperty)}`;
      return { pointer: pointer || '/', message: v.message ?? 'is invalid', in: where };
    });
    return new AppError('validation_failed', `request ${where} is invalid`, details);
  }
  const mapped = fastifyError.code ? FASTIFY_CODES[fastifyError.code] : undefined;
  if (mapped) return new AppError(mapped, fastifyError.message);
  if (hasErrorCode(error, UNSTORABLE_TEXT_CODES)) return new AppError('bad_request', 'the request contains text that cannot be stored (NUL or unpaired surrogate characters)');
  // Connection-level failures mean the database is away: tell clients to retry, not that we broke.
  if (isConnectionError(error)) return new AppError('unavailable', 'the database is unavailable, retry shortly', [], { 'retry-after': '2' });
  if (isCancelled(error)) {
    return new AppError('unavailable', 'the database cancelled a statement that ran too long (DATABASE_STATEMENT_TIMEOUT_MS) or was stopped; retry later, or narrow the request', [], { 'retry-after': '5' });
  }
  if (fastifyError.statusCode === 429) return new AppError('rate_limited', fastifyError.message);
  if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new AppError('bad_request', fastifyError.message);
  }
  return new AppError('internal', 'internal error');
}

/** Writes `error` in the contract's error format (toAppError already hid any 5xx internals). */
export function sendError(request: FastifyRequest, reply: FastifyReply, error: AppError): FastifyReply {
  return reply
    .code(statusOf[error.code])
    .headers(error.headers)
    .send({ error: { code: error.code, message: error.message, details: error.details, request_id: String(request.id) } } satisfies ErrorBody);
}

/** One error handler and one not-found handler for the whole app. */
export default fp(
  async (app: FastifyInstance) => {
    app.setErrorHandler((error: FastifyError, request, reply) => {
      const appError = toAppError(error);
      if (appError.statusCode >= 500) request.log.error({ err: error }, 'request failed');
      else request.log.info({ code: appError.code }, appError.message);
      return sendError(request, reply, appError);
    });
    app.setNotFoundHandler((request, reply) =>
      sendError(request, reply, new AppError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`)),
    );
  },
  { name: 'error-handler' },
);
