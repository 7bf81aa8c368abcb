-- Per-field lengths (number of lexeme positions per tsvector weight) for BM25F length normalization.
ALTER TABLE tools
  ADD COLUMN len_a smallint NOT NULL DEFAULT 0,
  ADD COLUMN len_b smallint NOT NULL DEFAULT 0,
  ADD COLUMN len_c smallint NOT NULL DEFAULT 0,
  ADD COLUMN len_d smallint NOT NULL DEFAULT 0;

-- Exact tool-name matches in queries are looked up case-insensitively.
CREATE INDEX tools_tenant_lower_name_idx ON tools (tenant_id, lower(name));
