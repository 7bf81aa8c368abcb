import { describe, expect, it } from 'vitest';

import { ConfigError, loadConfig } from '../../src/config.js';
import { type AppError } from '../../src/errors.js';
import { admitUrl } from '../../src/upstreams/allow-list.js';
import { HeaderSealer, redact, sealContext } from '../../src/upstreams/secrets.js';

const key = Buffer.alloc(32, 7);

describe('HeaderSealer', () => {
  it('opens what it sealed, and the ciphertext holds no header value', () => {
    const sealer = new HeaderSealer(key);
    const sealed = sealer.seal({ authorization: 'Bearer sk-very-secret-value' }, sealContext('acme', 'github'));
    expect(sealed).not.toContain('sk-very-secret-value');
    expect(Buffer.from(sealed, 'base64').toString('latin1')).not.toContain('sk-very-secret-value');
    expect(sealer.open(sealed, sealContext('acme', 'github'))).toEqual({ authorization: 'Bearer sk-very-secret-value' });
  });

  it('refuses to open a value moved to another tenant or upstream, or under another key', () => {
    const sealed = new HeaderSealer(key).seal({ 'x-api-key': 'k-123456789' }, sealContext('acme', 'github'));
    expect(() => new HeaderSealer(key).open(sealed, sealContext('other', 'github'))).toThrow();
    expect(() => new HeaderSealer(key).open(sealed, sealContext('acme', 'jira'))).toThrow();
    expect(() => new HeaderSealer(Buffer.alloc(32, 8)).open(sealed, sealContext('acme', 'github'))).toThrow();
  });

  it('redacts header values, and the token of a Bearer value, from upstream messages', () => {
    expect(redact('401: bad token sk-very-secret-value for Bearer sk-very-secret-value', { authorization: 'Bearer sk-very-secret-value' })).toBe('401: bad token [redacted] for [redacted]');
  });
});

describe('admitUrl (UPSTREAM_ALLOWED_URLS)', () => {
  const prefixes = loadConfig({ JWT_SECRET: 'x'.repeat(32), UPSTREAM_ALLOWED_URLS: 'https://mcp.example.com, http://10.0.0.5:3001/mcp' }).upstreams.allowedUrls;
  const refusal = (url: string, list = prefixes) => {
    try {
      admitUrl(url, list);
    } catch (error) {
      return error as AppError;
    }
    throw new Error(`${url} was admitted`);
  };

  it('admits URLs under a prefix, at a path boundary', () => {
    expect(admitUrl('https://mcp.example.com/github/mcp', prefixes).href).toBe('https://mcp.example.com/github/mcp');
    expect(admitUrl('http://10.0.0.5:3001/mcp', prefixes).href).toBe('http://10.0.0.5:3001/mcp');
    expect(admitUrl('http://10.0.0.5:3001/mcp/v2', prefixes).href).toBe('http://10.0.0.5:3001/mcp/v2');
  });

  it('refuses look-alike hosts and paths, other schemes, credentials in the URL', () => {
    for (const url of ['https://mcp.example.com.attacker.net/mcp', 'http://10.0.0.5:3001/mcp2', 'http://mcp.example.com/mcp', 'file:///etc/passwd', 'https://user:pw@mcp.example.com/mcp', 'not a url']) {
      const error = refusal(url);
      expect(error.statusCode).toBe(400);
      expect(error.details[0]?.pointer).toBe('/url');
    }
  });

  it('refuses every URL when the variable is unset, naming it', () => {
    const error = refusal('https://mcp.example.com/mcp', []);
    expect(error.statusCode).toBe(403);
    expect(error.message).toContain('UPSTREAM_ALLOWED_URLS');
  });

  it('rejects malformed prefixes and keys at boot', () => {
    expect(() => loadConfig({ UPSTREAM_ALLOWED_URLS: 'ftp://x' })).toThrow(ConfigError);
    expect(() => loadConfig({ UPSTREAM_ALLOWED_URLS: 'https://user:pw@x' })).toThrow(ConfigError);
    expect(() => loadConfig({ UPSTREAM_SECRET_KEY: 'short' })).toThrow(ConfigError);
    expect(loadConfig({ UPSTREAM_SECRET_KEY: 'ab'.repeat(32) }).upstreams.secretKey).toHaveLength(32);
    expect(loadConfig({ UPSTREAM_SECRET_KEY: Buffer.alloc(32, 1).toString('base64') }).upstreams.secretKey).toHaveLength(32);
  });
});
