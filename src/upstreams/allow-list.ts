import { AppError } from '../errors.js';

/**
 * The URL an upstream may have: http(s), no credentials in it (they belong in `headers`, which are
 * sealed; a URL is shown to every publisher), and under one of UPSTREAM_ALLOWED_URLS. A prefix
 * matches at a boundary only, so `https://mcp.example.com` does not admit
 * `https://mcp.example.com.attacker.net`. Nothing else is special-cased (no private-address
 * filter): the allow-list is the operator's SSRF control.
 */
export function admitUrl(raw: string, prefixes: readonly string[]): URL {
  if (prefixes.length === 0) {
    throw new AppError('forbidden', 'no upstream may be registered: the operator has not set UPSTREAM_ALLOWED_URLS', [{ pointer: '/url', message: 'UPSTREAM_ALLOWED_URLS is unset' }]);
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('must be an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('must be an http(s) URL');
  if (url.username || url.password) throw invalid('must not carry credentials: send them in headers, which are stored encrypted');
  if (url.hash) throw invalid('must not have a fragment');
  if (!prefixes.some((prefix) => underPrefix(url.href, prefix))) throw invalid('is not under any prefix of UPSTREAM_ALLOWED_URLS');
  return url;
}

function underPrefix(href: string, prefix: string): boolean {
  if (!href.startsWith(prefix)) return false;
  if (prefix.endsWith('/') || href.length === prefix.length) return true;
  return '/?#'.includes(href[prefix.length]!);
}

const invalid = (message: string) => new AppError('validation_failed', `url ${message}`, [{ pointer: '/url', message }]);
