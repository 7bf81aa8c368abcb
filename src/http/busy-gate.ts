import type { onRequestAsyncHookHandler } from 'fastify';

import { AppError } from '../errors.js';
import { sendError } from './error-handler.js';

/** Seconds a client is asked to wait before retrying while the database is busy. */
const BUSY_RETRY_AFTER_SECONDS = 5;

/**
 * Answers 503 with Retry-After while `busy` names a step that holds the database (the embedded
 * database's one-time vector index build): a request let through would wait for it, possibly for
 * minutes, instead of retrying or going elsewhere. An expected state, not a failure: logged at info.
 */
export function refuseWhileBusy(busy: () => string | undefined): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const reason = busy();
    if (reason === undefined) return;
    const error = new AppError('unavailable', `the database is busy ${reason}; retry shortly`, [], { 'retry-after': String(BUSY_RETRY_AFTER_SECONDS) });
    request.log.info({ code: error.code }, error.message);
    return sendError(request, reply, error);
  };
}
