-- Stored posting counts of each tenant's frequent lexemes, per scope set, at one catalog revision.
-- Discovery counts every query lexeme's visible postings (up to the common-word cap, 20% of the
-- catalog) to decide which lexemes to search and at what IDF: at 100,000 tools, counting the words
-- new to a replica's memo took ~21 ms of a 65 ms request. A background pass (term-counts.ts)
-- rebuilds a tenant's rows once its tools have stopped changing; discovery reads them only while
-- term_count_revisions holds the tenant's current tools_revision, and counts every lexeme not
-- stored (rare by construction) as before, so the counts, and the rankings, are the same either way.
CREATE TABLE term_counts (
  tenant_id text    NOT NULL,
  lexeme    text    NOT NULL,
  scope_set integer NOT NULL,
  postings  integer NOT NULL,
  in_names  integer NOT NULL,
  PRIMARY KEY (tenant_id, lexeme, scope_set) INCLUDE (postings, in_names)
);

CREATE TABLE term_count_revisions (
  tenant_id text   PRIMARY KEY,
  revision  bigint NOT NULL
);

-- The postings follow the tools rows only; tool vectors (0014) bump the catalog revision too, and
-- the indexer writes them for half an hour after a 100,000-tool registration. tools_revision counts
-- the tools' own changes, so stored counts stay valid while vectors are written.
ALTER TABLE catalog_revisions ADD COLUMN tools_revision bigint NOT NULL DEFAULT 0;

CREATE OR REPLACE FUNCTION bump_catalog_revision() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  tools_change integer := CASE WHEN TG_TABLE_NAME = 'tools' THEN 1 ELSE 0 END;
BEGIN
  INSERT INTO catalog_revisions AS r (tenant_id, revision, tools_revision)
  VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.tenant_id ELSE NEW.tenant_id END, 1, tools_change)
  ON CONFLICT (tenant_id) DO UPDATE SET revision = r.revision + 1, tools_revision = r.tools_revision + tools_change;
  RETURN NULL;
END
$$;
