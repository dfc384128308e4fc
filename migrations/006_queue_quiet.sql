-- 006_queue_quiet: a queued key group is decided once no run has arrived for
-- it for a quarter second (touched_at, set by every run), or at the latest two
-- seconds after it was queued (queued_at) when runs keep arriving. Before, a
-- group under a steady stream of runs was decided four times a second, each
-- time re-reading its history: during a 16-client ingest the worker took as
-- much of PostgreSQL as the ingest itself.
ALTER TABLE decision_queue ADD COLUMN touched_at timestamptz NOT NULL DEFAULT now();
