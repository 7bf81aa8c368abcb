import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;

/** README.md and every page under docs/: what a newcomer reads. */
const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** Folders whose files the docs may name in backticks (`src/db/client.ts`). */
const REPOSITORY_FOLDERS = ['src', 'test', 'scripts', 'migrations', 'examples', 'clients', 'docs', 'openapi', 'bin', '.ci'];
const PATH_SHAPE = new RegExp(`^(?:${REPOSITORY_FOLDERS.map((f) => f.replace('.', '\\.')).join('|')})/[\\w.@/-]*$`);

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .replace(/`/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** Markdown outside fenced code blocks (a link-shaped string in an example is not a link). */
const prose = (text: string): string => text.replace(/^```[\s\S]*?^```/gm, '');

function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of prose(readFileSync(file, 'utf8')).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = anchorOf(heading!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

describe.each(pages)('%s', (page) => {
  const file = join(ROOT, page);
  const text = prose(readFileSync(file, 'utf8'));

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target!)) continue; // http(s), mailto: not ours to check offline
      const [path, anchor] = target!.split('#') as [string, string | undefined];
      const resolved = path === '' ? file : resolve(dirname(file), path);
      if (!existsSync(resolved)) {
        broken.push(`${target}: no file ${relative(ROOT, resolved)}`);
        continue;
      }
      if (anchor !== undefined && statSync(resolved).isFile() && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
        broken.push(`${target}: no heading #${anchor} in ${relative(ROOT, resolved)}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('names only repository paths that exist', () => {
    const missing = [...text.matchAll(/`([^`\s]+)`/g)]
      .map(([, span]) => span!.replace(/[:,;]$/, ''))
      .filter((span) => PATH_SHAPE.test(span) && !span.includes('*'))
      .filter((span) => !existsSync(join(ROOT, span)));
    expect([...new Set(missing)]).toEqual([]);
  });
});

describe('anchorOf', () => {
  it('follows GitHub: code marks and punctuation dropped, spaces to hyphens', () => {
    expect(anchorOf('What `score` and `low_confidence` mean')).toBe('what-score-and-low_confidence-mean');
    expect(anchorOf('Past one PostgreSQL: sharding by tenant with Citus')).toBe('past-one-postgresql-sharding-by-tenant-with-citus');
    expect(anchorOf('Gateway flow: execution-time authorization')).toBe('gateway-flow-execution-time-authorization');
  });
});
