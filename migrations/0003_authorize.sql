-- Execution-time authorization: decisions are audited; allowed calls feed usage counts and
-- learned aliases (queries that led agents to a tool discovery had not offered).
CREATE INDEX audit_log_discovery_idx ON audit_log (discovery_id) WHERE discovery_id IS NOT NULL;

CREATE TABLE tool_usage (
  tool_id        bigint      PRIMARY KEY REFERENCES tools (id) ON DELETE CASCADE,
  tenant_id      text        NOT NULL,
  calls          bigint      NOT NULL DEFAULT 0,
  last_called_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE learned_aliases (
  id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tool_id    bigint      NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
  tenant_id  text        NOT NULL,
  query      text        NOT NULL,
  misses     integer     NOT NULL DEFAULT 1,
  first_seen timestamptz NOT NULL DEFAULT now(),
  last_seen  timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT learned_aliases_tool_query_key UNIQUE (tool_id, query)
);
CREATE INDEX learned_aliases_tenant_idx ON learned_aliases (tenant_id, last_seen DESC);

-- Active learned aliases, joined, indexed with the card (weight B) and embedded with it.
ALTER TABLE tools ADD COLUMN search_learned text NOT NULL DEFAULT '';
ALTER TABLE tools DROP COLUMN tsv;
ALTER TABLE tools ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('english'::regconfig, search_name), 'A') ||
  setweight(to_tsvector('english'::regconfig, search_card || ' ' || search_learned), 'B') ||
  setweight(to_tsvector('english'::regconfig, search_body), 'C') ||
  setweight(to_tsvector('english'::regconfig, search_params), 'D')
) STORED;
