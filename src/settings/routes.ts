import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';

import { ADMIN_SCOPE, PUBLISH_SCOPE } from '../auth/principal.js';
import { AppError } from '../errors.js';
import { errorResponses } from '../http/schemas.js';
import { SettingsBody, SettingsView } from './schemas.js';
import type { SettingsService } from './service.js';

/** Publishers read the settings their publishes follow; only administrators change them. */
const adminOrPublisher: onRequestHookHandler = async (request) => {
  const { scopes } = request.principal;
  if (!scopes.includes(ADMIN_SCOPE) && !scopes.includes(PUBLISH_SCOPE)) throw new AppError('forbidden', `this operation needs scope '${ADMIN_SCOPE}' or '${PUBLISH_SCOPE}'`);
};

/** /v1/settings: the caller's tenant settings. */
export default async function settingsRoutes(scope: FastifyInstance, options: { settings: SettingsService }): Promise<void> {
  const app = scope.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/v1/settings',
    {
      onRequest: adminOrPublisher,
      schema: {
        summary: 'The caller\'s tenant settings (administrators and publishers)',
        tags: ['settings'],
        response: { 200: SettingsView, ...errorResponses(401, 403) },
      },
    },
    async (request) => options.settings.get(request.principal),
  );

  app.put(
    '/v1/settings',
    {
      onRequest: app.requireScope(ADMIN_SCOPE),
      schema: {
        summary: 'Replace the caller\'s tenant settings (administrators)',
        tags: ['settings'],
        body: SettingsBody,
        response: { 200: SettingsView, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => options.settings.put(request.principal, request.body),
  );
}
