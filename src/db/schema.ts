import {
  bigint,
  boolean,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  real,
  smallint,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';

/**
 * Drizzle mirror of migrations/*.sql. The SQL files are the source of truth for DDL (indexes,
 * the generated tsvector, which no query here reads); this file gives queries their types.
 */

/**
 * Every tenant table carries tenant_id, and every key includes it (migration 0007: ready to
 * distribute by tenant, docs/operations.md, "Past one PostgreSQL").
 */
export const tools = pgTable('tools', {
  id: bigint('id', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
  tenantId: text('tenant_id').notNull(),
  name: text('name').notNull(),
  version: text('version').notNull(),
  revision: integer('revision').notNull(),
  status: text('status', { enum: ['active', 'retired'] }).notNull(),
  summary: text('summary').notNull(),
  description: text('description').notNull(),
  notFor: text('not_for'),
  aliases: text('aliases').array().notNull(),
  examples: text('examples').array().notNull(),
  tags: text('tags').array().notNull(),
  category: text('category'),
  requiredScopes: text('required_scopes').array().notNull(),
  sensitivity: text('sensitivity', { enum: ['low', 'medium', 'high'] }).notNull(),
  sideEffects: boolean('side_effects').notNull(),
  document: jsonb('document').$type<Record<string, unknown>>().notNull(),
  contentHash: text('content_hash').notNull(),
  tokenCosts: jsonb('token_costs').$type<Record<string, number>>().notNull(),
  searchName: text('search_name').notNull(),
  searchCard: text('search_card').notNull(),
  searchBody: text('search_body').notNull(),
  searchParams: text('search_params').notNull(),
  searchLearned: text('search_learned').notNull().default(''),
  lenA: smallint('len_a').notNull().default(0),
  lenB: smallint('len_b').notNull().default(0),
  lenC: smallint('len_c').notNull().default(0),
  lenD: smallint('len_d').notNull().default(0),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  createdBy: text('created_by'),
  updatedBy: text('updated_by'),
  /** The catalog sync source that owns the tool (migration 0019); null: published tool by tool. */
  source: text('source'),
}, (t) => [primaryKey({ columns: [t.id, t.tenantId] })]);

export const toolVersions = pgTable(
  'tool_versions',
  {
    toolId: bigint('tool_id', { mode: 'number' }).notNull(),
    revision: integer('revision').notNull(),
    tenantId: text('tenant_id').notNull(),
    name: text('name').notNull(),
    version: text('version').notNull(),
    document: jsonb('document').$type<Record<string, unknown>>().notNull(),
    contentHash: text('content_hash').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    createdBy: text('created_by'),
  },
  (t) => [primaryKey({ columns: [t.toolId, t.revision, t.tenantId] })],
);

export const auditLog = pgTable('audit_log', {
  id: bigint('id', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
  tenantId: text('tenant_id').notNull(),
  at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  actor: text('actor'),
  action: text('action').notNull(),
  toolName: text('tool_name').notNull(),
  toolVersion: text('tool_version'),
  decision: text('decision'),
  reasons: jsonb('reasons').$type<unknown[]>(),
  discoveryId: uuid('discovery_id'),
  details: jsonb('details').$type<Record<string, unknown>>(),
}, (t) => [primaryKey({ columns: [t.id, t.tenantId] })]);

export const discoveryLog = pgTable('discovery_log', {
  id: uuid('id').notNull(),
  tenantId: text('tenant_id').notNull(),
  subject: text('subject'),
  at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  query: text('query').notNull(),
  topK: smallint('top_k').notNull(),
  format: text('format').notNull(),
  filters: jsonb('filters').$type<Record<string, unknown>>(),
  shortlist: jsonb('shortlist').$type<{ name: string; version: string; score: number }[]>().notNull(),
  searchMode: text('search_mode').notNull(),
  lowConfidence: boolean('low_confidence').notNull(),
  topScore: real('top_score'),
  withheld: integer('withheld').notNull(),
  latencyMs: real('latency_ms').notNull(),
}, (t) => [primaryKey({ columns: [t.id, t.tenantId] })]);

export type ToolRow = typeof tools.$inferSelect;

export const learnedAliases = pgTable('learned_aliases', {
  id: bigint('id', { mode: 'number' }).notNull().generatedAlwaysAsIdentity(),
  toolId: bigint('tool_id', { mode: 'number' }).notNull(),
  tenantId: text('tenant_id').notNull(),
  query: text('query').notNull(),
  misses: integer('misses').notNull(),
  firstSeen: timestamp('first_seen', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  lastSeen: timestamp('last_seen', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  review: text('review', { enum: ['none', 'approved', 'rejected'] }).notNull().default('none'),
  reviewedBy: text('reviewed_by'),
  reviewedAt: timestamp('reviewed_at', { withTimezone: true, mode: 'date' }),
}, (t) => [primaryKey({ columns: [t.id, t.tenantId] })]);

/** One discovery that taught a learned alias: a discovery counts once, for its own subject. */
export const learnedAliasVotes = pgTable('learned_alias_votes', {
  discoveryId: uuid('discovery_id').notNull(),
  aliasId: bigint('alias_id', { mode: 'number' }).notNull(),
  tenantId: text('tenant_id').notNull(),
  subject: text('subject').notNull(),
  at: timestamp('at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
}, (t) => [primaryKey({ columns: [t.discoveryId, t.tenantId] })]);

export const catalogRevisions = pgTable('catalog_revisions', {
  tenantId: text('tenant_id').primaryKey(),
  revision: bigint('revision', { mode: 'number' }).notNull(),
});

/** A tenant's settings (migration 0017); no row means every default. */
export const tenantSettings = pgTable('tenant_settings', {
  tenantId: text('tenant_id').primaryKey(),
  warningsAsErrors: text('warnings_as_errors').array().notNull().default([]),
  updatedAt: timestamp('updated_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  updatedBy: text('updated_by'),
});

export type TenantSettingsRow = typeof tenantSettings.$inferSelect;

/** Upstream MCP servers of a tenant (migration 0018); `headers` is ciphertext (src/upstreams/secrets.ts). */
export const upstreams = pgTable('upstreams', {
  tenantId: text('tenant_id').notNull(),
  name: text('name').notNull(),
  url: text('url').notNull(),
  headers: text('headers'),
  requiredScopes: text('required_scopes').array().notNull(),
  sensitivity: text('sensitivity', { enum: ['low', 'medium', 'high'] }),
  sideEffects: boolean('side_effects'),
  status: text('status', { enum: ['pending', 'ok', 'degraded'] }).notNull(),
  toolCount: integer('tool_count').notNull(),
  syncedAt: timestamp('synced_at', { withTimezone: true, mode: 'date' }),
  lastError: text('last_error'),
  revision: integer('revision').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
  createdBy: text('created_by'),
}, (t) => [primaryKey({ columns: [t.tenantId, t.name] })]);

export type UpstreamRow = typeof upstreams.$inferSelect;

/** The tenant tools an upstream serves and their names upstream. */
export const upstreamTools = pgTable('upstream_tools', {
  tenantId: text('tenant_id').notNull(),
  toolName: text('tool_name').notNull(),
  upstreamName: text('upstream_name').notNull(),
  remoteName: text('remote_name').notNull(),
}, (t) => [primaryKey({ columns: [t.tenantId, t.toolName] })]);
