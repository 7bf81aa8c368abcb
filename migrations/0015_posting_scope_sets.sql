-- The lexical leg checked `required_scopes <@ caller's scopes` on every posting it read: at
-- 10,000 real-shaped tools and a caller holding 115 scopes, 2.5 µs per posting, about 40 ms of a
-- 57 ms retrieval statement (the common-word probe alone read up to 1,799 postings per query
-- word). Tools share few distinct scope sets (160 over those 10,000), so each tenant's distinct
-- sets are numbered once here and a posting carries its set's number. Discovery reads which sets
-- the caller holds (a few hundred containment checks, cached with the catalog statistics per
-- revision) and checks `scope_set = any(those numbers)` per posting: a hashed lookup.
-- A set's row never changes and is never deleted, so a number always means the same scopes.
CREATE TABLE scope_sets (
  id        integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id text    NOT NULL,
  scopes    text[]  NOT NULL,
  UNIQUE (tenant_id, scopes)
);

INSERT INTO scope_sets (tenant_id, scopes)
SELECT DISTINCT tenant_id, required_scopes FROM tools;

ALTER TABLE tool_terms ADD COLUMN scope_set integer;
-- From the tool's own scopes (authoritative), not the posting's copy of them.
UPDATE tool_terms p SET scope_set = s.id
FROM tools t JOIN scope_sets s ON s.tenant_id = t.tenant_id AND s.scopes = t.required_scopes
WHERE t.id = p.tool_id;
ALTER TABLE tool_terms ALTER COLUMN scope_set SET NOT NULL;

ALTER TABLE tool_terms DROP CONSTRAINT tool_terms_pkey;
ALTER TABLE tool_terms DROP COLUMN required_scopes;
ALTER TABLE tool_terms ADD CONSTRAINT tool_terms_pkey PRIMARY KEY (tenant_id, lexeme, tool_id)
  INCLUDE (tf_a, tf_b, tf_c, tf_d, len_a, len_b, len_c, len_d, scope_set);
