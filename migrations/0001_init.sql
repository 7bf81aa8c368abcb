-- Tool registry schema. Released migrations are never edited; add a new file instead.
CREATE EXTENSION IF NOT EXISTS vector;

-- Current version of each tool, one row per (tenant, name). Card columns are plain columns so the
-- security filter and the lexical leg read them without touching the JSON document.
CREATE TABLE tools (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id       text        NOT NULL,
  name            text        NOT NULL,
  version         text        NOT NULL,
  revision        integer     NOT NULL,
  status          text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'retired')),
  summary         text        NOT NULL,
  description     text        NOT NULL,
  not_for         text,
  aliases         text[]      NOT NULL DEFAULT '{}',
  examples        text[]      NOT NULL DEFAULT '{}',
  tags            text[]      NOT NULL DEFAULT '{}',
  category        text,
  required_scopes text[]      NOT NULL DEFAULT '{}',
  sensitivity     text        NOT NULL CHECK (sensitivity IN ('low', 'medium', 'high')),
  side_effects    boolean     NOT NULL DEFAULT false,
  document        jsonb       NOT NULL,
  content_hash    text        NOT NULL,
  token_costs     jsonb       NOT NULL,
  -- Card text prepared by the service (identifiers split into words), weighted into one tsvector:
  -- A name words and aliases, B summary/tags/category, C description/examples, D parameter names and descriptions.
  search_name     text        NOT NULL,
  search_card     text        NOT NULL,
  search_body     text        NOT NULL,
  search_params   text        NOT NULL,
  tsv             tsvector    GENERATED ALWAYS AS (
                    setweight(to_tsvector('english'::regconfig, search_name), 'A') ||
                    setweight(to_tsvector('english'::regconfig, search_card), 'B') ||
                    setweight(to_tsvector('english'::regconfig, search_body), 'C') ||
                    setweight(to_tsvector('english'::regconfig, search_params), 'D')
                  ) STORED,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  created_by      text,
  updated_by      text,
  CONSTRAINT tools_tenant_name_key UNIQUE (tenant_id, name)
);
CREATE INDEX tools_tenant_status_idx ON tools (tenant_id, status);
CREATE INDEX tools_required_scopes_idx ON tools USING gin (required_scopes);

-- Immutable history: one row per content change, never updated.
CREATE TABLE tool_versions (
  tool_id      bigint      NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
  revision     integer     NOT NULL,
  tenant_id    text        NOT NULL,
  name         text        NOT NULL,
  version      text        NOT NULL,
  document     jsonb       NOT NULL,
  content_hash text        NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  created_by   text,
  PRIMARY KEY (tool_id, revision)
);

-- BM25 postings derived from tools.tsv: per lexeme, its occurrence count in each weight class.
CREATE TABLE tool_terms (
  tenant_id text     NOT NULL,
  lexeme    text     NOT NULL,
  tool_id   bigint   NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
  tf_a      smallint NOT NULL,
  tf_b      smallint NOT NULL,
  tf_c      smallint NOT NULL,
  tf_d      smallint NOT NULL,
  PRIMARY KEY (tenant_id, lexeme, tool_id)
);
CREATE INDEX tool_terms_tool_idx ON tool_terms (tool_id);

-- One or more vectors per tool and embedding model (ord 0: the card; 1..n: aliases and examples).
-- Narrow on purpose: exact scans read only this table (see DESIGN.md, facts checked).
CREATE TABLE tool_embeddings (
  tool_id      bigint      NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
  model        text        NOT NULL,
  ord          smallint    NOT NULL,
  dims         integer     NOT NULL,
  content_hash text        NOT NULL,
  embedding    vector      NOT NULL,
  PRIMARY KEY (model, tool_id, ord)
);
CREATE INDEX tool_embeddings_tool_idx ON tool_embeddings (tool_id);

CREATE TABLE audit_log (
  id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant_id    text        NOT NULL,
  at           timestamptz NOT NULL DEFAULT now(),
  actor        text,
  action       text        NOT NULL,
  tool_name    text        NOT NULL,
  tool_version text,
  decision     text,
  reasons      jsonb,
  discovery_id uuid,
  details      jsonb
);
CREATE INDEX audit_log_tenant_idx ON audit_log (tenant_id, id DESC);

CREATE TABLE discovery_log (
  id             uuid        PRIMARY KEY,
  tenant_id      text        NOT NULL,
  subject        text,
  at             timestamptz NOT NULL DEFAULT now(),
  query          text        NOT NULL,
  top_k          smallint    NOT NULL,
  format         text        NOT NULL,
  filters        jsonb,
  shortlist      jsonb       NOT NULL,
  search_mode    text        NOT NULL,
  low_confidence boolean     NOT NULL,
  top_score      real,
  withheld       integer     NOT NULL,
  latency_ms     real        NOT NULL
);
CREATE INDEX discovery_log_tenant_idx ON discovery_log (tenant_id, at DESC);
