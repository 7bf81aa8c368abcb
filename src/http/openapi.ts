import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

import { polishOpenApi } from './openapi-polish.js';
import { ErrorResponse } from './schemas.js';

/** OpenAPI document generated from the route schemas; UI at /docs, JSON at /docs/json. */
export default fp(
  async (app: FastifyInstance, options: { version: string }) => {
    app.addSchema(ErrorResponse);
    await app.register(swagger, {
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Tool registry',
          description: 'Progressive disclosure of tool schemas for AI agents: register, discover, authorize.',
          version: options.version,
          license: { name: 'MIT', identifier: 'MIT' },
        },
        components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
        security: [{ bearer: [] }],
      },
      transformObject: (document) => polishOpenApi(('openapiObject' in document ? document.openapiObject : document.swaggerObject) as Record<string, unknown>),
      refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) },
    });
    await app.register(swaggerUi, { routePrefix: '/docs' });
  },
  { name: 'openapi' },
);
