-- Learned aliases are taught by distinct subjects, not by citations (issue 13, finding 1).
-- One row per discovery that taught a miss: a discovery counts once, for the subject that made
-- it; an alias's support is the number of distinct subjects among its live votes.
-- Keys include tenant_id like every tenant table's (0007).
CREATE TABLE learned_alias_votes (
  discovery_id uuid        NOT NULL,
  alias_id     bigint      NOT NULL,
  tenant_id    text        NOT NULL,
  subject      text        NOT NULL,
  at           timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (discovery_id, tenant_id),
  FOREIGN KEY (alias_id, tenant_id) REFERENCES learned_aliases (id, tenant_id) ON DELETE CASCADE
);
CREATE INDEX learned_alias_votes_alias_idx ON learned_alias_votes (alias_id, subject);
-- The per-subject learning budget counts a subject's recent votes.
CREATE INDEX learned_alias_votes_subject_idx ON learned_alias_votes (tenant_id, subject, at);

-- A publisher's review: aliases of high-sensitivity or side-effecting tools rank only once approved;
-- a rejected alias never ranks and is not taught again.
ALTER TABLE learned_aliases
  ADD COLUMN review      text        NOT NULL DEFAULT 'none' CHECK (review IN ('none', 'approved', 'rejected')),
  ADD COLUMN reviewed_by text,
  ADD COLUMN reviewed_at timestamptz;

-- Existing aliases were counted by citation, so none has proven support from distinct subjects:
-- none ranks until taught again. Clear the indexed learned text and rebuild those tools' postings
-- (their vectors follow: the indexer's stamp includes the learned text).
CREATE TEMPORARY TABLE relearn ON COMMIT DROP AS SELECT id FROM tools WHERE search_learned <> '';
UPDATE tools SET search_learned = '' WHERE id IN (SELECT id FROM relearn);
DELETE FROM tool_terms WHERE tool_id IN (SELECT id FROM relearn);
UPDATE tools t SET
  len_a = coalesce((SELECT sum(cardinality(array_positions(u.weights, 'A'))) FROM unnest(t.tsv) u), 0),
  len_b = coalesce((SELECT sum(cardinality(array_positions(u.weights, 'B'))) FROM unnest(t.tsv) u), 0),
  len_c = coalesce((SELECT sum(cardinality(array_positions(u.weights, 'C'))) FROM unnest(t.tsv) u), 0),
  len_d = coalesce((SELECT sum(cardinality(array_positions(u.weights, 'D'))) FROM unnest(t.tsv) u), 0)
WHERE t.id IN (SELECT id FROM relearn);
INSERT INTO tool_terms (tenant_id, lexeme, tool_id, tf_a, tf_b, tf_c, tf_d, required_scopes, len_a, len_b, len_c, len_d)
SELECT t.tenant_id, u.lexeme, t.id,
       coalesce(cardinality(array_positions(u.weights, 'A')), 0),
       coalesce(cardinality(array_positions(u.weights, 'B')), 0),
       coalesce(cardinality(array_positions(u.weights, 'C')), 0),
       coalesce(cardinality(array_positions(u.weights, 'D')), 0),
       t.required_scopes, t.len_a, t.len_b, t.len_c, t.len_d
FROM tools t, unnest(t.tsv) u
WHERE t.status = 'active' AND t.id IN (SELECT id FROM relearn);

-- Each vector remembers the text it was computed from, so a changed tool re-embeds only the
-- texts that changed (a new learned alias embeds that one text). Existing vectors have none and
-- are recomputed once, when their tool next changes.
ALTER TABLE tool_embeddings ADD COLUMN text_hash text;
