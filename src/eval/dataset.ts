import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { splitIdentifier } from '../tools/lexical/search-text.js';

/** One line of tools.jsonl in the shared benchmark format. */
export interface DatasetTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  category?: string | null;
}

/** One line of queries.jsonl. */
export interface DatasetQuery {
  id: string;
  query: string;
  relevant: string[];
}

async function readJsonl<T>(path: string): Promise<T[]> {
  const text = await readFile(path, 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      try {
        return JSON.parse(line) as T;
      } catch {
        throw new Error(`${path}:${i + 1}: not valid JSON`);
      }
    });
}

/** A dataset: its tools, its labelled requests, and the requests no tool serves (infeasible.jsonl, when present). */
interface Dataset {
  tools: DatasetTool[];
  queries: DatasetQuery[];
  infeasible: DatasetQuery[];
}

/** Loads tools.jsonl, queries.jsonl and, when present, infeasible.jsonl from a dataset folder. */
export async function loadDataset(dir: string): Promise<Dataset> {
  const infeasiblePath = join(dir, 'infeasible.jsonl');
  const [tools, queries, infeasible] = await Promise.all([
    readJsonl<DatasetTool>(join(dir, 'tools.jsonl')),
    readJsonl<DatasetQuery>(join(dir, 'queries.jsonl')),
    existsSync(infeasiblePath) ? readJsonl<DatasetQuery>(infeasiblePath) : Promise.resolve([]),
  ]);
  return { tools, queries, infeasible };
}

/**
 * The level of a request, from its id: `etom-L2-17` -> "L2" (dev-mcp's four levels),
 * `multi-3` -> "multi" (MetaTool's two-tool requests); anything else counts in no level.
 */
export function levelOf(id: string): string | undefined {
  return /-(L\d+)-/.exec(id)?.[1] ?? /^(single|multi)-/.exec(id)?.[1];
}

type JsonObject = Record<string, unknown>;
const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The registry document of a dataset tool, registered as published: parameters without
 * descriptions stay so (the registry accepts them with warnings), so the eval measures the catalog
 * users import. Only a non-object parameters root, which the registry refuses, is wrapped, and
 * counted.
 */
export function toToolDocument(tool: DatasetTool): { document: JsonObject; repairs: string[] } {
  const repairs: string[] = [];
  let parameters: JsonObject = isObject(tool.parameters) ? structuredClone(tool.parameters) : {};
  if (parameters.type !== 'object') {
    parameters = { type: 'object', properties: { input: parameters } };
    repairs.push('wrapped a non-object parameters root');
  }
  if (parameters.$schema !== undefined) delete parameters.$schema;
  return {
    document: {
      name: tool.name,
      version: '1.0.0',
      description: tool.description.trim() || splitIdentifier(tool.name),
      ...(tool.category ? { category: tool.category.slice(0, 64) } : {}),
      parameters,
    },
    repairs,
  };
}
