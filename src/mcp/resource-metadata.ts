import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';

import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import { errorResponses } from '../http/schemas.js';

/** Where RFC 9728 puts protected-resource metadata. */
const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

// A DNS name (labels of letters, digits and inner hyphens) or an IPv4 / bracketed IPv6 address,
// then an optional port: nothing that could close a quoted header parameter or change a URL.
const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*\\.?|\\[[0-9A-Fa-f:.]{2,45}\\])(?::[0-9]{1,5})?$`);

/** Whether a Host header (or trusted X-Forwarded-Host) is a plain host[:port]. */
export function isPlainHost(host: string): boolean {
  return host.length <= 260 && HOST.test(host);
}

/**
 * The service's external base URL: PUBLIC_URL, else the request's own scheme and Host, or
 * undefined when the Host is not a plain host[:port]. Without PUBLIC_URL the Host header is the
 * caller's to choose, and it was reflected unescaped into WWW-Authenticate and RFC 9728's
 * `resource` (issue 32, finding 10): now only a strict host[:port] is ever reflected.
 */
function baseUrlOf(request: FastifyRequest, oauth: Config['oauth']): string | undefined {
  if (oauth.publicUrl) return oauth.publicUrl;
  const protocol = request.protocol === 'https' ? 'https' : 'http';
  return isPlainHost(request.host) ? `${protocol}://${request.host}` : undefined;
}

/**
 * The `WWW-Authenticate` value of a 401 from /mcp: where the client learns how to get a token.
 * With a Host that is not a plain host[:port] (and no PUBLIC_URL), a bare challenge that names nothing.
 */
export function mcpChallenge(request: FastifyRequest, oauth: Config['oauth'], invalidToken: boolean): string {
  const base = baseUrlOf(request, oauth);
  const error = invalidToken ? 'error="invalid_token"' : undefined;
  const params = [base === undefined ? undefined : `resource_metadata="${base}${RESOURCE_METADATA_PATH}"`, error].filter((p) => p !== undefined);
  return params.length > 0 ? `Bearer ${params.join(', ')}` : 'Bearer';
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
          response: { 200: Metadata, ...errorResponses(400) },
        },
      },
      async (request) => {
        const base = baseUrlOf(request, options.oauth);
        if (base === undefined) throw new AppError('bad_request', 'the Host header is not a plain host[:port]; the service cannot name itself (operators: set PUBLIC_URL)');
        return {
          resource: `${base}${suffix}`,
          ...(servers.length > 0 ? { authorization_servers: servers } : {}),
          bearer_methods_supported: ['header'],
          resource_name: 'Tool registry',
        };
      },
    );
  }
}
