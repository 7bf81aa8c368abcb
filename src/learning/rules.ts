/**
 * What learning accepts: the pure rules that decide whether a call teaches a learned alias. The
 * storage rules (distinct subjects, one vote per discovery, the per-subject budget, approval)
 * live in src/learning/repository.ts; docs/api.md, "Learning from calls", states them together.
 */

/** The longest query that may become a learned alias: users' words for a tool, not a task description. */
const MAX_ALIAS_CHARS = 160;
const MAX_ALIAS_WORDS = 16;

/** What the discovery log says about the discovery an authorize call cited. */
export interface CitedDiscovery {
  query: string;
  /** Names the shortlist offered. */
  names: string[];
  filters: Record<string, unknown> | null;
  /** The legs that ranked (`lexical` when the embedder was down or the caller asked for it). */
  searchMode: string;
}

/** Why a cited discovery does not teach the called tool. */
type Unlearnable = 'offered' | 'partial_search' | 'too_long';

/**
 * Undefined when the call is a miss that may teach `tool`, else why not. A discovery teaches
 * only when it ranked the caller's whole visible catalog the way discovery ranks by default: a
 * filtered, single-leg or degraded search leaves tools out by construction, so its omission of a
 * tool says nothing about what discovery should rank (and filters are how an attacker keeps the
 * right tool out of the shortlist).
 */
export function unlearnable(discovery: CitedDiscovery, tool: string, defaultMode: string): Unlearnable | undefined {
  if (discovery.names.includes(tool)) return 'offered';
  if (filtered(discovery.filters) || discovery.searchMode !== defaultMode) return 'partial_search';
  if (!learnableQuery(discovery.query)) return 'too_long';
  return undefined;
}

/** Whether discovery filters narrowed the search (an empty filter object or tag list does not). */
function filtered(filters: Record<string, unknown> | null): boolean {
  return filters !== null && Object.values(filters).some((value) => value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0));
}

/** Whether a query is short enough to become an alias (characters and words). */
function learnableQuery(query: string): boolean {
  return query.length <= MAX_ALIAS_CHARS && (query.match(/\S+/g)?.length ?? 0) <= MAX_ALIAS_WORDS;
}
