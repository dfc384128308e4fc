-- 011_decision_batches: the decision workers claim many queue entries at
-- once (every ready entry of a few dozen key groups) and decide a group's
-- commits together, so a bulk import no longer costs a transaction and a
-- history read per (key group, commit). bulk marks an entry queued by a
-- request of many runs (an import): the workers take the entries of small
-- posts first, so a fresh commit's decision and alert do not wait behind
-- an import's backlog. A small post's run arriving for a bulk entry makes
-- it a small post's (bulk AND bulk).
ALTER TABLE decision_queue ADD COLUMN bulk boolean NOT NULL DEFAULT false;
