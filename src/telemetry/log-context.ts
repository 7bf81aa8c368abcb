import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

type RequestLogger = FastifyBaseLogger & Partial<Pick<Logger, 'setBindings'>>;

/**
 * Adds `fields` to every later line a request logs, its "request completed" line included
 * (tenant and subject once the token is verified, the tool a request is about). Callers pass
 * names only: never a token, never an argument value.
 */
export function logWith(request: FastifyRequest, reply: FastifyReply, fields: Record<string, string | null>): void {
  // With logging off Fastify hands every request its shared null logger: nothing to annotate.
  if (request.log === request.server.log) return;
  const log: RequestLogger = request.log;
  if (log.setBindings) {
    // pino: the request's own child logger (the reply shares it) annotated in place. A child of a
    // child per call cost ~30 µs a request; this ~1 µs.
    log.setBindings(fields);
    return;
  }
  request.log = request.log.child(fields);
  // Fastify writes "request completed" through the reply's logger, a reference taken at creation.
  reply.log = request.log;
}
