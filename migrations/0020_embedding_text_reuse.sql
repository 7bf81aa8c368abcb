-- The indexer reuses any vector of the same model already stored for an unchanged text in the same
-- tenant (a new version, another tool with the same alias), looked up by (tenant, model, text hash)
-- for every text of a batch: without this index each lookup would scan the tenant's vectors.
-- Vectors marked stale have no text hash and are never reused: they stay out of the index.
CREATE INDEX tool_embeddings_text_idx ON tool_embeddings (tenant_id, model, text_hash) WHERE text_hash IS NOT NULL;
