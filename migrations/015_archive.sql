-- 015_archive: old months leave the hot database. `kperfd archive --before
-- YYYY-MM` stores, per (run, metric) of each older month, the summary that
-- trends, compares and decisions read in place of the samples (count, mean,
-- sum of squared deviations, extremes, sum of reciprocals: see struct
-- stats_moments), then detaches the month's sample partition into the schema
-- `archive` (and, with --dump, into a pg_dump file, the table then dropped).
-- `kperfd restore-archive YYYY-MM` attaches it again and drops the summaries.
-- Both happen in one transaction: a read sees a month's samples or its
-- summaries, never both and never neither (readers that meet both, from two
-- statements straddling the switch, keep the samples).
CREATE SCHEMA IF NOT EXISTS archive;

CREATE TABLE sample_summary (
	at            timestamptz NOT NULL,      -- the run's received_at, as sample.at
	run_id        bigint NOT NULL,
	metric_id     bigint NOT NULL,
	key_group_id  integer NOT NULL,
	n             integer NOT NULL CHECK (n > 0),
	mean          double precision NOT NULL,
	m2            double precision NOT NULL, -- sum of (value - mean)^2
	min           double precision NOT NULL,
	max           double precision NOT NULL,
	rsum          double precision,          -- sum of 1/value; NULL when some value <= 0
	PRIMARY KEY (run_id, metric_id)
);
-- a trend's or a decision's reads: one range per key group (as sample_key_group)
CREATE INDEX sample_summary_key_group ON sample_summary (key_group_id, metric_id, run_id)
	INCLUDE (n, mean, m2, min, max, rsum);

CREATE TABLE archive_month (
	month        date PRIMARY KEY CHECK (extract(day FROM month) = 1),
	place        text NOT NULL CHECK (place IN ('schema', 'file')),
	file         text,
	runs         bigint NOT NULL,
	samples      bigint NOT NULL,
	summaries    bigint NOT NULL,
	archived_at  timestamptz NOT NULL DEFAULT now()
);

-- Bumped by every archive and restore: a reader that reads samples and
-- summaries in two statements (the decision worker) reads it before and
-- after, and reads again when it moved (a month would be missed or met twice).
CREATE TABLE archive_epoch (
	n bigint NOT NULL
);
INSERT INTO archive_epoch VALUES (0);

-- Summarise month m (its first day, UTC) and detach its partition into
-- schema archive. Returns the number of summaries stored. The partition
-- must exist and be attached; the caller's transaction holds it all.
CREATE FUNCTION kperf_archive_month(m date) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	part text := 'sample_' || to_char(m, 'YYYYMM');
	nsum bigint;
	nsamples bigint;
	nruns bigint;
BEGIN
	IF to_regclass('public.' || part) IS NULL THEN
		RAISE EXCEPTION 'no partition % of sample', part USING ERRCODE = 'undefined_table';
	END IF;
	EXECUTE format('SELECT count(*), count(DISTINCT run_id) FROM public.%I', part)
		INTO nsamples, nruns;
	EXECUTE format(
		'INSERT INTO sample_summary (at, run_id, metric_id, key_group_id, n, mean, m2, min, max, rsum)'
		' SELECT at, run_id, metric_id, min(key_group_id), count(*), avg(value),'
		'  coalesce(var_samp(value) * (count(*) - 1), 0), min(value), max(value),'
		'  CASE WHEN min(value) > 0 THEN sum(1 / value) END'
		' FROM public.%I GROUP BY run_id, metric_id, at', part);
	GET DIAGNOSTICS nsum = ROW_COUNT;
	EXECUTE format('ALTER TABLE sample DETACH PARTITION public.%I', part);
	EXECUTE format('ALTER TABLE public.%I SET SCHEMA archive', part);
	INSERT INTO archive_month (month, place, runs, samples, summaries)
		VALUES (m, 'schema', nruns, nsamples, nsum);
	UPDATE archive_epoch SET n = n + 1;
	RETURN nsum;
END $$;

-- Attach month m's table (in schema archive) again and drop its summaries.
CREATE FUNCTION kperf_restore_month(m date) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	part text := 'sample_' || to_char(m, 'YYYYMM');
	lo timestamptz := m::timestamp AT TIME ZONE 'UTC';
	hi timestamptz := (m + interval '1 month')::timestamp AT TIME ZONE 'UTC';
	nsum bigint;
BEGIN
	IF to_regclass('archive.' || part) IS NULL THEN
		RAISE EXCEPTION 'no table archive.%', part USING ERRCODE = 'undefined_table';
	END IF;
	IF to_regclass('public.' || part) IS NOT NULL THEN
		RAISE EXCEPTION 'a partition % is attached already', part
			USING ERRCODE = 'duplicate_table';
	END IF;
	EXECUTE format('ALTER TABLE archive.%I SET SCHEMA public', part);
	EXECUTE format('ALTER TABLE sample ATTACH PARTITION public.%I FOR VALUES FROM (%L) TO (%L)',
		part, lo, hi);
	DELETE FROM sample_summary WHERE at >= lo AND at < hi;
	GET DIAGNOSTICS nsum = ROW_COUNT;
	DELETE FROM archive_month WHERE month = m;
	UPDATE archive_epoch SET n = n + 1;
	RETURN nsum;
END $$;

-- Month m's table is in pg_dump file f (whole, checked by the caller): drop it.
CREATE FUNCTION kperf_archive_dumped(m date, f text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE format('DROP TABLE archive.%I', 'sample_' || to_char(m, 'YYYYMM'));
	UPDATE archive_month SET place = 'file', file = f WHERE month = m;
END $$;
