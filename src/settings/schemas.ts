import { type Static, Type } from 'typebox';

import { WARNING_CODES } from '../tools/warnings.js';

const warningList = `publish warnings refused with 400 instead of reported: ${WARNING_CODES.join(', ')}`;

/** The body of PUT /v1/settings: codes are checked by the service, so an unknown one is named in the 400. */
export const SettingsBody = Type.Object(
  { warnings_as_errors: Type.Array(Type.String({ maxLength: 64 }), { maxItems: 32, description: warningList }) },
  { additionalProperties: false },
);

export const SettingsView = Type.Object(
  {
    warnings_as_errors: Type.Array(Type.String(), { description: warningList }),
    updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'null until the tenant first sets anything' }),
    updated_by: Type.Union([Type.String(), Type.Null()]),
  },
  { $id: 'TenantSettings', description: 'the caller\'s tenant settings' },
);

export type SettingsView = Static<typeof SettingsView>;
