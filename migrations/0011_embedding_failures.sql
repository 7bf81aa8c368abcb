-- Why a tool's vectors are not current: the indexer records the last failed attempt for the
-- content it tried (stamp = what the vectors would have been computed from) and clears it when
-- the tool's vectors are saved. The publisher's view reports index_status from it: `failed` while
-- the failure concerns the tool's current content, `pending` otherwise, `indexed` once current.
-- Keys include tenant_id like every tenant table's (0007).
CREATE TABLE embedding_failures (
  tenant_id text        NOT NULL,
  tool_id   bigint      NOT NULL,
  model     text        NOT NULL,
  stamp     text        NOT NULL,
  error     text        NOT NULL,
  failed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tool_id, model, tenant_id),
  FOREIGN KEY (tool_id, tenant_id) REFERENCES tools (id, tenant_id) ON DELETE CASCADE
);
