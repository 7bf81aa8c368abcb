-- Settings a tenant's administrators choose (scope registry:admin, GET/PUT /v1/settings). One row
-- per tenant, absent until first set (every setting then has its default). warnings_as_errors:
-- the publish warnings (src/tools/warnings.ts) this tenant refuses with 400 instead of reporting.
CREATE TABLE tenant_settings (
  tenant_id          text        PRIMARY KEY,
  warnings_as_errors text[]      NOT NULL DEFAULT '{}',
  updated_at         timestamptz NOT NULL DEFAULT now(),
  updated_by         text
);
