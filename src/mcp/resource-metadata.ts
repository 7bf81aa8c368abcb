import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';

import type { Config } from '../config.js';

/** Where RFC 9728 puts protected-resource metadata. */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/** The service's external base URL: PUBLIC_URL, else the request's own scheme and Host. */
export function baseUrlOf(request: FastifyRequest, oauth: Config['oauth']): string {
  return oauth.publicUrl ?? `${request.protocol}://${request.host}`;
}

/** The `WWW-Authenticate` value of a 401 from /mcp: where the client learns how to get a token. */
export function mcpChallenge(request: FastifyRequest, oauth: Config['oauth'], invalidToken: boolean): string {
  const metadata = `${baseUrlOf(request, oauth)}${RESOURCE_METADATA_PATH}`;
  return `Bearer resource_metadata="${metadata}"${invalidToken ? ', error="invalid_token"' : ''}`;
}

const Metadata = Type.Object({
  resource: Type.String({ description: 'the protected resource: the service (root document) or its /mcp endpoint' }),
  authorization_servers: Type.Optional(Type.Array(Type.String(), { description: 'issuers of tokens for this service, when configured' })),
  bearer_methods_supported: Type.Array(Type.String()),
  resource_name: Type.String(),
});

/**
 * RFC 9728 OAuth protected-resource metadata, public like /healthz. The root document describes
 * the whole service; the `/mcp` suffix (where RFC 9728 looks for a resource with a path) describes
 * the MCP endpoint. Tokens go in the Authorization header only.
 */
export default async function resourceMetadataRoutes(scope: FastifyInstance, options: { oauth: Config['oauth'] }): Promise<void> {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();
  const servers = options.oauth.authorizationServers;
  for (const suffix of ['', '/mcp']) {
    app.get(
      `${RESOURCE_METADATA_PATH}${suffix}`,
      {
        schema: {
          summary: `OAuth protected-resource metadata (RFC 9728) of ${suffix === '' ? 'the service' : 'the MCP endpoint'}`,
          tags: ['mcp'],
          security: [],
          response: { 200: Metadata },
        },
      },
      async (request) => ({
        resource: `${baseUrlOf(request, options.oauth)}${suffix}`,
        ...(servers.length > 0 ? { authorization_servers: servers } : {}),
        bearer_methods_supported: ['header'],
        resource_name: 'Tool registry',
      }),
    );
  }
}
