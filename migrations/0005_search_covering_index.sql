-- Both retrieval legs join candidates (postings, vectors) to `tools` only to apply the security
-- predicate and read BM25 field lengths. The rows are wide (document, card texts, tsvector), so
-- each join fetched a heap page per candidate; this narrow covering index lets PostgreSQL answer
-- the join from the index alone once VACUUM has set the visibility map (autovacuum; table
-- maintenance on PGlite).
CREATE INDEX tools_search_cover_idx ON tools (id)
  INCLUDE (tenant_id, status, required_scopes, category, tags, name, len_a, len_b, len_c, len_d);
