import { writeFileSync } from 'node:fs';

import { openPglite } from '../src/db/client.js';
import { migrate } from '../src/db/migrate.js';
import { OPENAPI_PATH, openApiDocument } from './openapi-document.js';

/* eslint-disable no-console -- a script's output is its interface */

/** `npm run openapi`: regenerates openapi/openapi.json from the route schemas. */
const database = await openPglite('memory://');
try {
  await migrate(database);
  writeFileSync(OPENAPI_PATH, await openApiDocument(database));
  console.log(`wrote ${OPENAPI_PATH}`);
} finally {
  await database.close();
}
