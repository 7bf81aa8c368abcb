import { describe, expect, it } from 'vitest';

import { isPlainHost } from '../../src/mcp/resource-metadata.js';
import { useApp } from '../helpers/app.js';
import { inProcessDatabase } from '../helpers/databases.js';
import { expectCleanError } from './helpers.js';

/**
 * Issue 32, finding 10: without PUBLIC_URL, the Host header was reflected unescaped into /mcp's
 * `WWW-Authenticate` and RFC 9728's `resource`. Only a strict host[:port] is reflected now; any
 * other Host gets a bare challenge and a 400 from the metadata document. No storage involved.
 */
const HOSTILE = ['evil.example", error="insufficient_scope', 'a b', 'evil.example/path', 'user@evil.example', 'evil.example:80:80', 'x,realm=y'];

describe('the Host header in WWW-Authenticate and protected-resource metadata', () => {
  const db = inProcessDatabase();
  const ctx = useApp(db);
  const withPublicUrl = useApp(db, { PUBLIC_URL: 'https://registry.example.com' });

  const mcp = (app: typeof ctx.app, host: string, authorization?: string) =>
    app.inject({ method: 'POST', url: '/mcp', headers: { host, ...(authorization ? { authorization } : {}) }, payload: {} });

  it('accepts host names, addresses and ports only', () => {
    for (const host of ['registry.example.com', 'localhost:3000', '10.0.0.7:8080', '[::1]:3000', 'registry.example.com.']) expect(isPlainHost(host), host).toBe(true);
    for (const host of [...HOSTILE, '', ':80', '-bad.example', 'a..b']) expect(isPlainHost(host), host).toBe(false);
  });

  it('reflects a plain Host, as before', async () => {
    const res = await mcp(ctx.app, 'registry.example.com:8443');
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer resource_metadata="http://registry.example.com:8443/.well-known/oauth-protected-resource"');
    const metadata = await ctx.app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource/mcp', headers: { host: 'registry.example.com:8443' } });
    expect(metadata.json()).toMatchObject({ resource: 'http://registry.example.com:8443/mcp' });
  });

  it('never reflects any other Host: a bare challenge on /mcp, 400 from the metadata document', async () => {
    for (const host of HOSTILE) {
      const anonymous = await mcp(ctx.app, host);
      expect(anonymous.statusCode, host).toBe(401);
      expect(anonymous.headers['www-authenticate'], host).toBe('Bearer');
      const badToken = await mcp(ctx.app, host, 'Bearer not.a.token');
      expect(badToken.headers['www-authenticate'], host).toBe('Bearer error="invalid_token"');
      for (const suffix of ['', '/mcp']) {
        const metadata = await ctx.app.inject({ method: 'GET', url: `/.well-known/oauth-protected-resource${suffix}`, headers: { host } });
        expectCleanError(metadata, 400);
        expect(metadata.body, host).not.toContain('evil');
        expect(metadata.json<{ error: { message: string } }>().error.message).toMatch(/PUBLIC_URL/);
      }
    }
  });

  it('ignores the Host header altogether when PUBLIC_URL is set', async () => {
    const res = await mcp(withPublicUrl.app, HOSTILE[0]!);
    expect(res.headers['www-authenticate']).toBe('Bearer resource_metadata="https://registry.example.com/.well-known/oauth-protected-resource"');
    const metadata = await withPublicUrl.app.inject({ method: 'GET', url: '/.well-known/oauth-protected-resource', headers: { host: HOSTILE[0]! } });
    expect(metadata.json()).toMatchObject({ resource: 'https://registry.example.com' });
  });
});
