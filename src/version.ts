import { readFileSync } from 'node:fs';

/** The package version, reported by the OpenAPI document and the CLI. */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
