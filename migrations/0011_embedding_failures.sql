-- Why a tool's vectors are not current: the indexer records the last failed attempt for the
-- content it tried (stamp = what the vectors would have been computed from) and clears it when
-- the tool's vectors are saved. The publisher's view reports index_status from it: `failed` while
-- the failure concerns the tool's current content, `pending` otherwise, `indexed` once current.
CREATE TABLE embedding_failures (
  tool_id   bigint      NOT NULL REFERENCES tools (id) ON DELETE CASCADE,
  model     text        NOT NULL,
  stamp     text        NOT NULL,
  error     text        NOT NULL,
  failed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tool_id, model)
);
