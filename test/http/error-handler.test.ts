import { describe, expect, it } from 'vitest';

import { AppError, statusOf } from '../../src/errors.js';
import { toAppError } from '../../src/http/error-handler.js';

const fastifyError = (props: Record<string, unknown>) => Object.assign(new Error(String(props.message ?? 'boom')), props) as never;

describe('toAppError', () => {
  it('passes AppErrors through', () => {
    const error = new AppError('conflict', 'taken');
    expect(toAppError(error)).toBe(error);
  });

  it('turns Fastify validation errors into 400 with JSON pointers', () => {
    const error = toAppError(
      fastifyError({
        validationContext: 'querystring',
        validation: [
          { instancePath: '/limit', keyword: 'maximum', params: {}, message: 'must be <= 200' },
          { instancePath: '', keyword: 'required', params: { missingProperty: 'q' }, message: "must have required property 'q'" },
          { instancePath: '/filters', keyword: 'additionalProperties', params: { additionalProperty: 'tenant' }, message: 'must NOT have additional properties' },
        ],
      }),
    );
    expect(error.statusCode).toBe(400);
    expect(error.code).toBe('validation_failed');
    expect(error.details).toEqual([
      { pointer: '/limit', message: 'must be <= 200', in: 'querystring' },
      { pointer: '/q', message: "must have required property 'q'", in: 'querystring' },
      { pointer: '/filters/tenant', message: 'must NOT have additional properties', in: 'querystring' },
    ]);
  });

  it.each([
    ['FST_ERR_CTP_BODY_TOO_LARGE', 413],
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 415],
    ['FST_ERR_CTP_INVALID_JSON_BODY', 400],
    ['FST_ERR_CTP_EMPTY_JSON_BODY', 400],
  ])('maps %s to %i', (code, status) => {
    expect(toAppError(fastifyError({ code, statusCode: status })).statusCode).toBe(status);
  });

  it.each(['ECONNREFUSED', 'ECONNRESET', '57P01', '08006'])('maps a database connection failure (%s, even nested as a cause) to 503', (code) => {
    expect(toAppError(fastifyError({ code })).code).toBe('unavailable');
    expect(toAppError(fastifyError({ message: 'query failed', cause: Object.assign(new Error('x'), { code }) })).code).toBe('unavailable');
  });

  it('survives a cyclic cause chain', () => {
    const a: Record<string, unknown> = { message: 'a' };
    a.cause = a;
    expect(toAppError(fastifyError(a)).code).toBe('internal');
  });

  it('hides the details of unexpected errors behind 500 internal', () => {
    const error = toAppError(new Error('password=hunter2 at db.internal:5432'));
    expect(error).toMatchObject({ code: 'internal', message: 'internal error', statusCode: 500 });
  });

  it('keeps other client errors as 400 and rate limits as 429', () => {
    expect(toAppError(fastifyError({ statusCode: 405, message: 'nope' })).statusCode).toBe(400);
    expect(toAppError(fastifyError({ statusCode: 429, message: 'slow down' })).code).toBe('rate_limited');
  });

  it('has an HTTP status for every error code', () => {
    for (const [code, status] of Object.entries(statusOf)) {
      expect(new AppError(code as keyof typeof statusOf, 'm').statusCode).toBe(status);
      expect(status).toBeGreaterThanOrEqual(400);
    }
  });
});
