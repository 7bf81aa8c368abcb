import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join, relative } from 'node:path';

import { parseAllDocuments } from 'yaml';

import type { ToolDocument } from '../../clients/typescript/src/index.js';

/** One tool document read from disk, or why it could not be read. */
export interface LoadedDocument {
  /** file, with `#n` when the file holds several documents */
  source: string;
  document?: ToolDocument;
  error?: string;
  /** Changes made to the document before pushing, with their reasons (import-mcp). */
  notes?: string[];
}

const EXTENSIONS = new Set(['.json', '.yaml', '.yml']);

/** Files under `paths`: files as given, folders walked recursively for .json/.yaml/.yml, sorted. */
async function expandPaths(paths: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const path of paths) {
    const info = await stat(path);
    if (!info.isDirectory()) {
      files.push(path);
      continue;
    }
    const entries = await readdir(path, { recursive: true, withFileTypes: true });
    const found = entries
      .filter((e) => e.isFile() && EXTENSIONS.has(extname(e.name).toLowerCase()))
      .map((e) => join(e.parentPath, e.name))
      .sort();
    files.push(...found);
  }
  return [...new Set(files)];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Values in a parsed file: a document, an array of documents, or `{ tools: [...] }`. */
function flatten(value: unknown): unknown[] {
  if (Array.isArray(value)) return value.flatMap(flatten);
  if (isPlainObject(value) && Array.isArray(value.tools) && value.name === undefined) return value.tools.flatMap(flatten);
  return value === null || value === undefined ? [] : [value];
}

async function parseFile(file: string): Promise<unknown[]> {
  const text = await readFile(file, 'utf8');
  if (extname(file).toLowerCase() === '.json') return flatten(JSON.parse(text));
  const docs = parseAllDocuments(text);
  if (!Array.isArray(docs)) return [];
  const values: unknown[] = [];
  for (const doc of docs) {
    const error = doc.errors[0];
    if (error) throw new Error(error.message);
    values.push(...flatten(doc.toJS()));
  }
  return values;
}

/** Reads every tool document under `paths`. Unreadable files and non-documents become errors. */
export async function loadDocuments(paths: string[], cwd = process.cwd()): Promise<LoadedDocument[]> {
  const loaded: LoadedDocument[] = [];
  for (const file of await expandPaths(paths)) {
    const local = relative(cwd, file);
    const shown = local && !local.startsWith('..') ? local : file;
    let values: unknown[];
    try {
      values = await parseFile(file);
    } catch (error) {
      loaded.push({ source: shown, error: `cannot parse: ${(error as Error).message}` });
      continue;
    }
    values.forEach((value, i) => {
      const source = values.length > 1 ? `${shown}#${i + 1}` : shown;
      if (!isPlainObject(value) || typeof value.name !== 'string') loaded.push({ source, error: 'not a tool document (an object with a string "name")' });
      else loaded.push({ source, document: value as unknown as ToolDocument });
    });
  }
  return loaded;
}
