-- A per-tenant revision of the catalog, bumped by every change to a tenant's tools. Each service
-- replica caches catalog statistics (BM25 collection statistics, visible and withheld counts,
-- catalog token totals) and reuses them only while the tenant's revision is unchanged, so a
-- publish, retirement or scope change made through any replica applies to the next discovery
-- on every replica: a one-row read instead of a TTL or a notification channel. The revision is
-- read from the pool that serves the discovery, so on a read replica it moves with the replayed
-- rows it describes.
CREATE TABLE catalog_revisions (
  tenant_id text   PRIMARY KEY,
  revision  bigint NOT NULL
);

CREATE FUNCTION bump_catalog_revision() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO catalog_revisions AS r (tenant_id, revision)
  VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.tenant_id ELSE NEW.tenant_id END, 1)
  ON CONFLICT (tenant_id) DO UPDATE SET revision = r.revision + 1;
  RETURN NULL;
END
$$;

-- Deferred to commit: the tenant's revision row is locked last and only for the commit itself, so
-- writes of one tenant never wait on each other's whole transactions for it, and a transaction
-- touching many tools cannot deadlock with a publish over it.
CREATE CONSTRAINT TRIGGER tools_catalog_revision
  AFTER INSERT OR UPDATE OR DELETE ON tools
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION bump_catalog_revision();
