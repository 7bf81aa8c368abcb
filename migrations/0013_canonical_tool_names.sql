-- Tool names are unique per tenant in a canonical form (issue 13, finding 7): case-insensitive,
-- with '-', '.' and '_' alike (runs folded to one) and trailing separators ignored, so
-- `pay_vendor`, `Pay_Vendor`, `pay-vendor` and `pay_vendor.` are one name. The expression is
-- repeated in src/tools/repository.ts (CANONICAL_NAME); keep them equal.
ALTER TABLE tools ADD COLUMN canonical_name text
  GENERATED ALWAYS AS (regexp_replace(rtrim(lower(name), '._-'), '[._-]+', '_', 'g')) STORED;
-- Tools registered before this rule may already collide: the oldest of each group keeps the
-- canonical name, the others stay as they are (still readable, publishable and retirable by
-- their exact name) but are exempt from the unique index, so the migration never fails.
ALTER TABLE tools ADD COLUMN canonical_name_legacy boolean NOT NULL DEFAULT false;
UPDATE tools t SET canonical_name_legacy = true
WHERE EXISTS (SELECT 1 FROM tools o WHERE o.tenant_id = t.tenant_id AND o.canonical_name = t.canonical_name AND o.id < t.id);
CREATE UNIQUE INDEX tools_tenant_canonical_name_idx ON tools (tenant_id, canonical_name) WHERE NOT canonical_name_legacy;
