-- Upstream MCP servers registered per tenant (issue 34, the MCP gateway). `headers` holds the
-- credentials sent to the upstream, encrypted with AES-256-GCM under UPSTREAM_SECRET_KEY
-- (base64 of iv | tag | ciphertext); nothing reads them but the client that calls that upstream.
CREATE TABLE upstreams (
  tenant_id       text        NOT NULL,
  name            text        NOT NULL,
  url             text        NOT NULL,
  headers         text,
  required_scopes text[]      NOT NULL DEFAULT '{}',
  sensitivity     text        CHECK (sensitivity IN ('low', 'medium', 'high')),
  side_effects    boolean,
  status          text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'ok', 'degraded')),
  tool_count      integer     NOT NULL DEFAULT 0,
  synced_at       timestamptz,
  last_error      text,
  revision        integer     NOT NULL DEFAULT 1,
  created_at      timestamptz NOT NULL DEFAULT now(),
  created_by      text,
  PRIMARY KEY (tenant_id, name)
);

-- Which tenant tools an upstream serves, under which name of its own. Rows outlive a deleted
-- upstream (its tools are retired, not deleted), so registering it again restores them.
CREATE TABLE upstream_tools (
  tenant_id     text NOT NULL,
  tool_name     text NOT NULL,
  upstream_name text NOT NULL,
  remote_name   text NOT NULL,
  PRIMARY KEY (tenant_id, tool_name)
);
CREATE INDEX upstream_tools_by_upstream ON upstream_tools (tenant_id, upstream_name);
