/**
 * TypeScript client SDK of the tool registry.
 *
 * ```ts
 * import { RegistryClient } from 'tool-registry/client';
 * const registry = new RegistryClient({ baseUrl: 'http://localhost:8080', token: process.env.REGISTRY_TOKEN });
 * const { tools } = await registry.discover({ query: 'refund my last order', top_k: 3 });
 * ```
 */
export { type CallOptions, RegistryClient, type RegistryClientOptions } from './client.js';
export { isRegistryError, RegistryError } from './errors.js';
export { type FetchLike, parseRetryAfter, type RetryOptions, type TokenSource } from './http.js';
export { documentChanges } from './compare.js';
export { canonicalJson } from '../tools/canonical-json.js';
export type * from './types.js';
