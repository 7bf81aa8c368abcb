/**
 * TypeScript client SDK of the tool registry: zero dependencies, fetch-based (Node 18+, Deno, Bun,
 * browsers).
 *
 * ```ts
 * import { RegistryClient } from 'tool-registry-client';
 * const registry = new RegistryClient(); // REGISTRY_URL and REGISTRY_TOKEN from the environment
 * const { tools } = await registry.discover({ query: 'refund my last order', top_k: 3, format: 'anthropic' });
 * tools[0]?.schema.input_schema; // typed by the format
 * ```
 */
export { type CallOptions, RegistryClient, type RegistryClientOptions, type WaitOptions } from './client.js';
export { isRegistryError, RegistryError } from './errors.js';
export { DEFAULT_BASE_URL, type FetchLike, parseRetryAfter, RETRY_STATUSES, type RetryOptions, type TokenSource } from './http.js';
export type * from './types.js';
export { VERSION } from './version.js';
