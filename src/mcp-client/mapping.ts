import type { Tool } from '@modelcontextprotocol/sdk/types.js';

import type { ToolDocument } from '../../clients/typescript/src/index.js';
import { ajvFor } from '../tools/json-schema.js';
import type { Sensitivity } from '../tools/model.js';
import { unknownSchemaKeywords } from '../tools/schema-keywords.js';

/**
 * MCP tool -> registry document: the mapping `import-mcp` applies to a snapshot and the gateway
 * applies on every upstream sync, so both name and describe an MCP tool the same way.
 */

export interface MappingOptions {
  /** Namespace prepended to every tool name, e.g. `github.`. */
  prefix?: string;
  /** Scopes every imported tool requires. */
  scopes?: string[];
  /** Version of the imported documents (semver). */
  version: string;
  category?: string;
  tags?: string[];
  /** Override the sensitivity inferred from annotations. */
  sensitivity?: Sensitivity;
  /** Longest description the registry accepts (MAX_DESCRIPTION_LENGTH, default 1024): longer ones are cut, the original kept in `x-mcp.description`. */
  maxDescription?: number;
  /** Name of the MCP server (kept in `x-mcp`). */
  serverName?: string;
}

export interface MappedTool {
  document: ToolDocument;
  /** Repairs made so the document registers (e.g. a misspelt keyword kept as an `x-` annotation). */
  notes: string[];
}

const NAME_MAX = 64;

/** A registry name for an MCP tool: prefix + name, characters outside [a-zA-Z0-9_.-] replaced by `_`. */
export function registryName(prefix: string, name: string): string {
  let result = `${prefix}${name}`.replace(/[^a-zA-Z0-9_.-]/g, '_');
  if (!/^[a-zA-Z]/.test(result)) result = `t_${result}`;
  return result.slice(0, NAME_MAX);
}

function humanize(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_.-]+/g, ' ').trim().toLowerCase();
  return `The ${words}.`;
}

/** Resolves a JSON pointer below `root` to its parent object and last key. */
function parentOf(root: Record<string, unknown>, pointer: string, prefix: string): { parent: Record<string, unknown>; key: string } | undefined {
  const tokens = pointer.slice(prefix.length).split('/').slice(1).map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
  const key = tokens.pop();
  let node: unknown = root;
  for (const token of tokens) node = (node as Record<string, unknown> | undefined)?.[token];
  return key !== undefined && typeof node === 'object' && node !== null ? { parent: node as Record<string, unknown>, key } : undefined;
}

/**
 * Makes a schema registrable without changing what it validates: only what the registry refuses
 * is touched. Misspelt keywords (they validate nothing) are kept as `x-` annotations and misspelt
 * formats (annotations too) are dropped; other unknown keywords and formats register as published,
 * with a warning from the registry. Every repair is noted with its pointer.
 */
export function repairSchema(schema: Record<string, unknown>, prefix: string, notes: string[]): void {
  const ajv = ajvFor(schema);
  if (!ajv) {
    notes.push(`${prefix}: dropped unsupported $schema ${JSON.stringify(schema.$schema)} (validated as draft 2020-12)`);
    delete schema.$schema;
  }
  for (const { pointer } of unknownSchemaKeywords(schema, prefix, ajvFor(schema)!).filter((f) => f.typo)) {
    const at = parentOf(schema, pointer, prefix);
    if (!at) continue;
    if (at.key === 'format') {
      notes.push(`${pointer}: dropped unknown format ${JSON.stringify(at.parent.format)}`);
      delete at.parent.format;
    } else {
      notes.push(`${pointer}: unknown keyword kept as x-${at.key}`);
      at.parent[`x-${at.key}`] = at.parent[at.key];
      delete at.parent[at.key];
    }
  }
}

/**
 * The input schema as the server published it: parameters without descriptions are kept as they
 * are (the registry accepts them and reports a warning for each), never described with invented text.
 */
function parametersOf(tool: Tool, notes: string[]): Record<string, unknown> {
  const schema = structuredClone(tool.inputSchema) as Record<string, unknown>;
  if (schema.type === undefined) schema.type = 'object';
  repairSchema(schema, '/parameters', notes);
  return schema;
}

/**
 * Maps an MCP tool to a registry document: name (prefixed), description, inputSchema as
 * parameters, outputSchema as returns; `readOnlyHint` means no side effects, `destructiveHint`
 * means side effects (and medium sensitivity); without hints the MCP defaults apply (a tool may
 * modify its environment). The original name and annotations are kept under `x-mcp`.
 */
export function mapMcpTool(tool: Tool, options: MappingOptions): MappedTool {
  const notes: string[] = [];
  const annotations = tool.annotations ?? {};
  const readOnly = annotations.readOnlyHint === true;
  const destructive = annotations.destructiveHint === true;
  const sideEffects = destructive || !readOnly;
  const max = options.maxDescription ?? 1024;
  const original = (tool.description ?? '').trim() || (tool.title ?? annotations.title ?? '').trim() || humanize(tool.name);
  let description = original;
  if (description.length > max) {
    description = `${description.slice(0, max - 1).trimEnd()}…`;
    notes.push(`description cut from ${original.length} to ${max} characters (--max-description; the original is kept in x-mcp.description)`);
  }
  if (!tool.description?.trim()) notes.push('the server gave no description: used the title or the name');
  const title = (tool.title ?? annotations.title)?.trim();
  const scopes = options.scopes ?? [];
  let sensitivity = options.sensitivity ?? (destructive ? 'medium' : 'low');
  if (sensitivity === 'high' && scopes.length === 0) {
    sensitivity = 'medium';
    notes.push('sensitivity high needs --scopes; used medium');
  }
  const name = registryName(options.prefix ?? '', tool.name);
  if (name !== `${options.prefix ?? ''}${tool.name}`) notes.push(`renamed from '${tool.name}': registry names are [a-zA-Z][a-zA-Z0-9_.-]{0,63}`);
  let returns: Record<string, unknown> | undefined;
  if (tool.outputSchema) {
    returns = structuredClone(tool.outputSchema) as Record<string, unknown>;
    repairSchema(returns, '/returns', notes);
  }
  const document: ToolDocument = {
    name,
    version: options.version,
    description,
    ...(options.category ? { category: options.category } : {}),
    tags: [...new Set(['mcp', ...(options.tags ?? [])])],
    required_scopes: scopes,
    sensitivity,
    side_effects: sideEffects,
    parameters: parametersOf(tool, notes),
    ...(returns ? { returns } : {}),
    'x-mcp': { server: options.serverName ?? null, tool: tool.name, ...(title ? { title } : {}), annotations, ...(description !== original ? { description: original } : {}) },
  };
  return { document, notes };
}
