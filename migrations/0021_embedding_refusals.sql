-- Whether the embedder refused a tool's texts themselves (HTTP 400, 413 or 422: a description over
-- the model's length, say) rather than failing (down, timing out). The indexer does not send a
-- refused tool's unchanged content again until the refusal is an hour old or the indexer
-- restarts (src/embedding/indexer.ts, refusedRetryMs): it retried it on every
-- pass before, and a pass that did any work was followed by another 5 s later, so one tenant's
-- refused tools kept the indexer and a remote embedder busy for every tenant, for good.
ALTER TABLE embedding_failures ADD COLUMN refused boolean NOT NULL DEFAULT false;
