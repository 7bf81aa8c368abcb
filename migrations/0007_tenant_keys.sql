-- Ready for sharding by tenant (Citus, README "Past one PostgreSQL"): every tenant table carries
-- tenant_id, and every primary key, unique key and foreign key between tenant tables includes it,
-- as a distribution column must be. tenant_id is appended to the existing keys rather than put
-- first, so the lookups those keys serve today (by tool id, by model and tool) keep their plans.
-- Safe on existing data: child rows take their tool's tenant before the keys are rebuilt, and the
-- whole file runs in the migration's one transaction.

-- 1. Child rows agree with their tool's tenant (they always have; this makes the keys below safe regardless).
UPDATE tool_versions c SET tenant_id = t.tenant_id FROM tools t WHERE t.id = c.tool_id AND c.tenant_id <> t.tenant_id;
UPDATE tool_terms c SET tenant_id = t.tenant_id FROM tools t WHERE t.id = c.tool_id AND c.tenant_id <> t.tenant_id;
UPDATE tool_usage c SET tenant_id = t.tenant_id FROM tools t WHERE t.id = c.tool_id AND c.tenant_id <> t.tenant_id;
UPDATE learned_aliases c SET tenant_id = t.tenant_id FROM tools t WHERE t.id = c.tool_id AND c.tenant_id <> t.tenant_id;

-- 2. Vectors get their tool's tenant.
ALTER TABLE tool_embeddings ADD COLUMN tenant_id text;
UPDATE tool_embeddings e SET tenant_id = t.tenant_id FROM tools t WHERE t.id = e.tool_id;
ALTER TABLE tool_embeddings ALTER COLUMN tenant_id SET NOT NULL;

-- 3. Foreign keys to tools(id) go before its primary key changes.
ALTER TABLE tool_versions DROP CONSTRAINT tool_versions_tool_id_fkey;
ALTER TABLE tool_terms DROP CONSTRAINT tool_terms_tool_id_fkey;
ALTER TABLE tool_embeddings DROP CONSTRAINT tool_embeddings_tool_id_fkey;
ALTER TABLE tool_usage DROP CONSTRAINT tool_usage_tool_id_fkey;
ALTER TABLE learned_aliases DROP CONSTRAINT learned_aliases_tool_id_fkey;

-- 4. Keys that include the tenant.
ALTER TABLE tools DROP CONSTRAINT tools_pkey, ADD CONSTRAINT tools_pkey PRIMARY KEY (id, tenant_id);
ALTER TABLE tool_versions DROP CONSTRAINT tool_versions_pkey, ADD CONSTRAINT tool_versions_pkey PRIMARY KEY (tool_id, revision, tenant_id);
ALTER TABLE tool_embeddings DROP CONSTRAINT tool_embeddings_pkey, ADD CONSTRAINT tool_embeddings_pkey PRIMARY KEY (model, tool_id, ord, tenant_id);
ALTER TABLE audit_log DROP CONSTRAINT audit_log_pkey, ADD CONSTRAINT audit_log_pkey PRIMARY KEY (id, tenant_id);
ALTER TABLE discovery_log DROP CONSTRAINT discovery_log_pkey, ADD CONSTRAINT discovery_log_pkey PRIMARY KEY (id, tenant_id);
ALTER TABLE tool_usage DROP CONSTRAINT tool_usage_pkey, ADD CONSTRAINT tool_usage_pkey PRIMARY KEY (tool_id, tenant_id);
ALTER TABLE learned_aliases DROP CONSTRAINT learned_aliases_pkey, ADD CONSTRAINT learned_aliases_pkey PRIMARY KEY (id, tenant_id);
ALTER TABLE learned_aliases DROP CONSTRAINT learned_aliases_tool_query_key,
  ADD CONSTRAINT learned_aliases_tool_query_key UNIQUE (tool_id, query, tenant_id);

-- 5. Foreign keys within one tenant (co-located shards under Citus).
ALTER TABLE tool_versions ADD CONSTRAINT tool_versions_tool_fkey FOREIGN KEY (tool_id, tenant_id) REFERENCES tools (id, tenant_id) ON DELETE CASCADE;
ALTER TABLE tool_terms ADD CONSTRAINT tool_terms_tool_fkey FOREIGN KEY (tool_id, tenant_id) REFERENCES tools (id, tenant_id) ON DELETE CASCADE;
ALTER TABLE tool_embeddings ADD CONSTRAINT tool_embeddings_tool_fkey FOREIGN KEY (tool_id, tenant_id) REFERENCES tools (id, tenant_id) ON DELETE CASCADE;
ALTER TABLE tool_usage ADD CONSTRAINT tool_usage_tool_fkey FOREIGN KEY (tool_id, tenant_id) REFERENCES tools (id, tenant_id) ON DELETE CASCADE;
ALTER TABLE learned_aliases ADD CONSTRAINT learned_aliases_tool_fkey FOREIGN KEY (tool_id, tenant_id) REFERENCES tools (id, tenant_id) ON DELETE CASCADE;
