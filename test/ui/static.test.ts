import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { UI_ROOT } from '../../src/ui/plugin.js';
import { useApp } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';

/** The UI's files over HTTP (no browser): headers, no inline code, nothing from other origins. */
forEachDatabase((db) => {
  describe('GET /ui', () => {
    const ctx = useApp(db);

    it('serves the page at /ui and /ui/ with a CSP that forbids inline and foreign code', async () => {
      for (const url of ['/ui', '/ui/']) {
        const response = await ctx.app.inject({ url });
        expect(response.statusCode).toBe(200);
        expect(response.headers['content-type']).toMatch(/^text\/html/);
        const csp = String(response.headers['content-security-policy']);
        expect(csp).toContain("default-src 'none'");
        expect(csp).toContain("script-src 'self'");
        expect(csp).not.toContain('unsafe-inline');
        expect(csp).toContain("frame-ancestors 'none'");
        expect(response.headers['x-content-type-options']).toBe('nosniff');
      }
    });

    it('serves the script and the stylesheet with their types, no token needed', async () => {
      expect((await ctx.app.inject({ url: '/ui/app.js' })).headers['content-type']).toMatch(/javascript/);
      expect((await ctx.app.inject({ url: '/ui/style.css' })).headers['content-type']).toMatch(/^text\/css/);
      expect((await ctx.app.inject({ url: '/ui/../package.json' })).statusCode).not.toBe(200);
    });

    it('keeps /ui and /mcp out of the OpenAPI document', async () => {
      const paths = Object.keys((await ctx.app.inject({ url: '/docs/json' })).json<{ paths: Record<string, unknown> }>().paths);
      expect(paths.filter((p) => p.startsWith('/ui') || p.startsWith('/mcp'))).toEqual([]);
    });
  });
});

describe('UI files', () => {
  const files = readdirSync(UI_ROOT).map((name) => ({ name, text: readFileSync(join(UI_ROOT, name), 'utf8') }));

  it('hold no inline script, no inline style and no reference to another origin', () => {
    const html = files.find((f) => f.name === 'index.html')!.text;
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/i);
    expect(html).not.toMatch(/\son[a-z]+\s*=/i);
    expect(html).not.toMatch(/\sstyle\s*=/i);
    for (const { name, text } of files) expect(text, name).not.toMatch(/(?:src|href)\s*=\s*["']?(?:https?:)?\/\//i);
    for (const { name, text } of files) expect(text, name).not.toMatch(/https?:\/\/(?!www\.w3\.org)/i);
  });

  it('never writes API data as markup', () => {
    const script = files.find((f) => f.name === 'app.js')!.text;
    expect(script).not.toMatch(/\.(?:innerHTML|outerHTML)\s*=|insertAdjacentHTML\(|document\.write\(/);
  });
});
