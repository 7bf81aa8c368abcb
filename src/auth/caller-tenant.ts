import { requestContext } from '@fastify/request-context';

declare module '@fastify/request-context' {
  interface RequestContextData {
    /** The verified caller's tenant, set by the auth plugin once the token is verified. */
    tenant: string;
  }
}

/**
 * The tenant of the request the calling code runs for, from its verified token; '' outside a
 * request (background work) or before the token is verified. Shared resources (the database pool)
 * serve tenants in turns by it, without every query taking the tenant as an argument.
 */
export const callerTenant = (): string => requestContext.get('tenant') ?? '';
