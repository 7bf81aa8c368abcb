import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Adds `fields` to every later line a request logs, its "request completed" line included
 * (tenant and subject once the token is verified, the tool a request is about). Callers pass
 * names only: never a token, never an argument value.
 */
export function logWith(request: FastifyRequest, reply: FastifyReply, fields: Record<string, string | null>): void {
  request.log = request.log.child(fields);
  // Fastify writes "request completed" through the reply's logger, a reference taken at creation.
  reply.log = request.log;
}
