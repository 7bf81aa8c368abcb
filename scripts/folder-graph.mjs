#!/usr/bin/env node
// The import graph between the folders (and top-level modules) of src/, and any cycle in it.
//   node scripts/folder-graph.mjs          prints "folder -> folders it imports", one line each
// Exits 1 when folders import each other in a cycle (naming one import per edge of each cycle), so
// `npm run check` fails on one; the ESLint layering rule (eslint.config.mjs) catches it file by file.
import console from 'node:console';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');
const IMPORT = /(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

/** The folder a file belongs to, or a top-level module's own name. */
const unitOf = (path) => {
  const parts = relative(src, path).split('/');
  return parts.length > 1 ? parts[0] : parts[0].replace(/\.(ts|js|mts|mjs)$/, '');
};

const files = readdirSync(src, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile() && /\.(ts|mts|mjs)$/.test(entry.name))
  .map((entry) => join(entry.parentPath, entry.name))
  .filter((path) => !path.includes('/public/'));

/** folder -> (imported folder -> one import that makes the edge) */
const edges = new Map();
for (const file of files) {
  for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
    const spec = match[1] ?? match[2];
    const target = resolve(dirname(file), spec);
    if (!target.startsWith(`${src}/`)) continue;
    const [from, to] = [unitOf(file), unitOf(target)];
    if (from === to) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    if (!edges.get(from).has(to)) edges.get(from).set(to, `${relative(src, file)} imports ${spec}`);
  }
}

for (const [from, targets] of [...edges].sort(([a], [b]) => a.localeCompare(b))) {
  console.log(`${from} -> ${[...targets.keys()].sort().join(', ')}`);
}

// Strongly connected components (Tarjan): each with more than one folder is a cycle.
const index = new Map();
const low = new Map();
const stack = [];
const cycles = [];
const visit = (node) => {
  index.set(node, index.size);
  low.set(node, index.get(node));
  stack.push(node);
  for (const next of edges.get(node)?.keys() ?? []) {
    if (!index.has(next)) visit(next);
    if (stack.includes(next)) low.set(node, Math.min(low.get(node), low.get(next)));
  }
  if (low.get(node) !== index.get(node)) return;
  const component = stack.splice(stack.indexOf(node));
  if (component.length > 1) cycles.push(component.sort());
};
for (const node of edges.keys()) if (!index.has(node)) visit(node);

for (const component of cycles) {
  console.log(`\ncycle among: ${component.join(', ')}`);
  for (const from of component) {
    for (const [to, why] of edges.get(from) ?? []) if (component.includes(to)) console.log(`  ${from} -> ${to}: ${why}`);
  }
}
console.log(`\n${cycles.length} folder cycle(s) under src/`);
process.exitCode = cycles.length > 0 ? 1 : 0;
