-- Tool vectors bump the tenant's catalog revision too (see 0012). They are written after the
-- tool's own commit, by the indexer, so a cache checked against the revision alone (whole
-- shortlists, src/discovery/shortlist-cache.ts) would keep serving a ranking computed before a
-- new tool's vectors existed. Same deferred trigger as the tools', for the same reasons.
CREATE CONSTRAINT TRIGGER tool_embeddings_catalog_revision
  AFTER INSERT OR UPDATE OR DELETE ON tool_embeddings
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION bump_catalog_revision();
