-- The lexical leg read each posting's heap row (postings were inserted tool by tool, so one
-- lexeme's postings sat on as many pages as it had tools) and joined every visible tool to apply
-- the security predicate and read BM25 field lengths: measured in PGlite at 10,000 tools, most of
-- a ~25 ms leg. Postings now carry what that leg needs, in a covering primary key, so it is one
-- index-only range scan per query lexeme:
--   * required_scopes, copied from the tool in the same transaction as every change, so the
--     security predicate applies to the posting itself;
--   * the BM25F field lengths;
--   * postings exist only for active tools (retiring deletes them, restoring rebuilds them).
ALTER TABLE tool_terms
  ADD COLUMN required_scopes text[]  NOT NULL DEFAULT '{}',
  ADD COLUMN len_a           integer NOT NULL DEFAULT 0,
  ADD COLUMN len_b           integer NOT NULL DEFAULT 0,
  ADD COLUMN len_c           integer NOT NULL DEFAULT 0,
  ADD COLUMN len_d           integer NOT NULL DEFAULT 0;

ALTER TABLE tool_terms DROP CONSTRAINT tool_terms_pkey;
ALTER TABLE tool_terms ADD CONSTRAINT tool_terms_pkey PRIMARY KEY (tenant_id, lexeme, tool_id)
  INCLUDE (tf_a, tf_b, tf_c, tf_d, len_a, len_b, len_c, len_d, required_scopes);

-- Rebuild every posting from the tsvector. This also indexes learned aliases, which earlier
-- versions added to the tsvector without refreshing the postings.
DELETE FROM tool_terms;
UPDATE tools t SET
  len_a = coalesce((SELECT sum(cardinality(array_positions(u.weights, 'A'))) FROM unnest(t.tsv) u), 0),
  len_b = coalesce((SELECT sum(cardinality(array_positions(u.weights, 'B'))) FROM unnest(t.tsv) u), 0),
  len_c = coalesce((SELECT sum(cardinality(array_positions(u.weights, 'C'))) FROM unnest(t.tsv) u), 0),
  len_d = coalesce((SELECT sum(cardinality(array_positions(u.weights, 'D'))) FROM unnest(t.tsv) u), 0);
INSERT INTO tool_terms (tenant_id, lexeme, tool_id, tf_a, tf_b, tf_c, tf_d, required_scopes, len_a, len_b, len_c, len_d)
SELECT t.tenant_id, u.lexeme, t.id,
       coalesce(cardinality(array_positions(u.weights, 'A')), 0),
       coalesce(cardinality(array_positions(u.weights, 'B')), 0),
       coalesce(cardinality(array_positions(u.weights, 'C')), 0),
       coalesce(cardinality(array_positions(u.weights, 'D')), 0),
       t.required_scopes, t.len_a, t.len_b, t.len_c, t.len_d
FROM tools t, unnest(t.tsv) u
WHERE t.status = 'active';
