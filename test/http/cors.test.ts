import { describe, expect, it } from 'vitest';

import { ConfigError, loadConfig } from '../../src/config.js';
import { useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { token } from '../helpers/tokens.js';

const UI = 'https://ui.example.com';
const preflight = { origin: UI, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' };

forEachDatabase((db) => {
  describe('CORS by default (CORS_ORIGINS unset): same origin only', () => {
    const ctx = useApp(db);
    it('grants no cross-origin access, on preflight nor on requests', async () => {
      const options = await ctx.app.inject({ method: 'OPTIONS', url: '/v1/discover', headers: preflight });
      expect(options.headers['access-control-allow-origin']).toBeUndefined();
      const get = await ctx.app.inject({ method: 'GET', url: '/v1/tools', headers: { origin: UI, authorization: `Bearer ${await token()}` } });
      expect(get.statusCode).toBe(200);
      expect(get.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  describe('CORS with CORS_ORIGINS', () => {
    const ctx = useApp(db, { CORS_ORIGINS: `${UI}, http://localhost:5173` });
    it('answers a listed origin\'s preflight with the headers the API needs', async () => {
      const response = await ctx.app.inject({ method: 'OPTIONS', url: '/v1/discover', headers: preflight });
      expect(response.statusCode).toBe(204);
      expect(response.headers['access-control-allow-origin']).toBe(UI);
      expect(String(response.headers['access-control-allow-headers'])).toMatch(/authorization/);
      expect(String(response.headers['access-control-allow-methods'])).toMatch(/POST/);
      expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    });

    it('lets a listed origin read responses and their headers, even errors', async () => {
      const ok = await ctx.app.inject({ method: 'GET', url: '/v1/tools', headers: { origin: UI, authorization: `Bearer ${await token()}` } });
      expect(ok.headers['access-control-allow-origin']).toBe(UI);
      expect(String(ok.headers['access-control-expose-headers'])).toMatch(/x-request-id/);
      const denied = await ctx.app.inject({ method: 'GET', url: '/v1/tools', headers: { origin: UI } });
      expect(denied.statusCode).toBe(401);
      expect(denied.headers['access-control-allow-origin']).toBe(UI);
    });

    it('grants nothing to an origin not listed', async () => {
      const response = await ctx.app.inject({ method: 'OPTIONS', url: '/v1/discover', headers: { ...preflight, origin: 'https://evil.example' } });
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    });
  });
});

describe('CORS_ORIGINS configuration', () => {
  it('accepts origins and a lone *', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:3000/' }).cors.origins).toEqual(['https://a.example', 'http://localhost:3000']);
    expect(loadConfig({ CORS_ORIGINS: '*' }).cors.origins).toEqual(['*']);
    expect(loadConfig({}).cors.origins).toEqual([]);
  });

  it('rejects paths, bare hosts and * mixed with origins', () => {
    for (const value of ['https://a.example/app', 'a.example', '*, https://a.example']) {
      expect(() => loadConfig({ CORS_ORIGINS: value }), value).toThrow(ConfigError);
    }
  });
});
