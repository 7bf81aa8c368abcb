import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { EnvSchema } from '../../src/config.js';

const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');

/**
 * The variables of the page's tables, each with the default its row gives: a row names one or more
 * variables in its first cell and, in its last, their defaults in backticks in the same order (a
 * row whose defaults are prose, "unset: …", gives none to compare).
 */
function documented(): Map<string, string | undefined> {
  const variables = new Map<string, string | undefined>();
  for (const row of page.split('\n').filter((line) => line.startsWith('| `'))) {
    const cells = row.slice(1, -1).split(' | ');
    const names = [...cells[0]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!);
    const defaults = [...cells.at(-1)!.matchAll(/`([^`]*)`/g)].map((m) => m[1]!);
    names.forEach((name, i) => variables.set(name, defaults.length === names.length ? defaults[i] : undefined));
  }
  return variables;
}

describe('docs/configuration.md', () => {
  const variables = documented();
  const schema = EnvSchema.properties as Record<string, { default?: unknown }>;

  it('documents every variable the service reads, and none it does not', () => {
    expect([...variables.keys()].sort()).toEqual(Object.keys(schema).sort());
  });

  it('gives each variable the default the service applies', () => {
    const stated = Object.entries(schema).filter(([name, s]) => s.default !== undefined && variables.get(name) !== undefined);
    expect(stated.length).toBeGreaterThan(40);
    expect(Object.fromEntries(stated.map(([name]) => [name, variables.get(name)]))).toEqual(Object.fromEntries(stated.map(([name, s]) => [name, String(s.default)])));
  });
});
