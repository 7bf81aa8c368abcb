import { readFileSync } from 'node:fs';

import semver from 'semver';
import { describe, expect, it } from 'vitest';

interface LockEntry {
  version?: string;
  dev?: boolean;
  engines?: { node?: string } | string[];
}

const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8')) as { packages: Record<string, LockEntry> };
const declared = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
const oldest = semver.minVersion(declared.engines.node)!.version;

/** Packages whose declared Node range excludes `version` (npm ci warns EBADENGINE for them). */
function excluding(version: string, filter: (entry: LockEntry) => boolean): string[] {
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && filter(entry))
    .filter(([, entry]) => !Array.isArray(entry.engines) && entry.engines?.node && !semver.satisfies(version, entry.engines.node))
    .map(([path, entry]) => `${path.replace(/^.*node_modules\//, '')}@${entry.version} (node ${(entry.engines as { node: string }).node})`);
}

describe('package-lock.json engines', () => {
  it(`lets every production dependency run on the oldest Node the README names (${oldest})`, () => {
    expect(excluding(oldest, (entry) => !entry.dev)).toEqual([]);
  });

  it(`lets every dependency, dev ones included, install on this Node (${process.version}) without EBADENGINE`, () => {
    expect(excluding(process.version, () => true)).toEqual([]);
  });
});
