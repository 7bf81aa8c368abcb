import type { ToolRow } from '../db/schema.js';
import type { TokenCosts, ToolCard, ToolDocument, ToolView } from './model.js';

/** Whether a tool is searchable by meaning: its vectors are current, pending, or their last attempt failed. */
export type IndexStatus = 'pending' | 'indexed' | 'failed';

/** The columns a card and a rendered schema are made from: a row without its search texts. */
export type ShortlistRow = Omit<ToolRow, 'searchName' | 'searchCard' | 'searchBody' | 'searchParams' | 'searchLearned'>;

/** The stored document of a row (the publisher's input with defaults applied). */
export function documentOf(row: Pick<ToolRow, 'document'>): ToolDocument {
  return row.document as unknown as ToolDocument;
}

export function toCard(row: ShortlistRow): ToolCard {
  return {
    name: row.name,
    version: row.version,
    status: row.status,
    summary: row.summary,
    not_for: row.notFor,
    aliases: row.aliases,
    examples: row.examples,
    tags: row.tags,
    category: row.category,
    required_scopes: row.requiredScopes,
    sensitivity: row.sensitivity,
    side_effects: row.sideEffects,
    tokens: row.tokenCosts as TokenCosts,
    updated_at: row.updatedAt.toISOString(),
  };
}

export function toView(row: ToolRow): ToolView {
  const { extensions, ...document } = documentOf(row);
  return {
    ...extensions,
    ...document,
    revision: row.revision,
    status: row.status,
    source: row.source,
    tokens: row.tokenCosts as TokenCosts,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}

/** Strong validator of a tool's current state: changes with every revision. */
export function etagOf(row: Pick<ToolRow, 'revision' | 'contentHash' | 'status'>): string {
  return `"${row.revision}-${row.contentHash.slice(0, 16)}${row.status === 'retired' ? '-r' : ''}"`;
}
