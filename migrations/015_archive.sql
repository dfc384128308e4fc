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

-- A month's summaries of one (key group, metric): one row, the month's runs
-- in arrays (run id order). Most runs have one value per metric (LKP's): for
-- a row whose runs all have one, only the means are kept (n, m2, min, max
-- and rsum follow from them), so a summarised value costs ~16 bytes, not a
-- row of its own (a (run, metric) row cost 289 bytes against 186 for the
-- sample it replaced; capacity plan in README).
CREATE TABLE summary_month (
	key_group_id  integer NOT NULL,
	metric_id     bigint NOT NULL,
	month         date NOT NULL,
	run_ids       bigint[] NOT NULL,
	mean          double precision[] NOT NULL,
	n             integer[],          -- NULL: every run has one value
	m2            double precision[], -- sum of (value - mean)^2
	min           double precision[],
	max           double precision[],
	rsum          double precision[], -- sum of 1/value; an element NULL when some value <= 0
	PRIMARY KEY (key_group_id, metric_id, month)
);
-- a compare reads one run's summaries: its key group's rows of its month;
-- archive and restore count and drop a month's rows
CREATE INDEX summary_month_month ON summary_month (month, key_group_id);

-- One row per (run, metric), as readers want them. Conditions on key_group_id,
-- metric_id and month reach summary_month's indexes; give them.
CREATE VIEW sample_summary AS
SELECT s.key_group_id, s.metric_id, s.month, u.run_id, coalesce(u.n, 1) AS n, u.mean,
       coalesce(u.m2, 0) AS m2, coalesce(u.min, u.mean) AS min, coalesce(u.max, u.mean) AS max,
       CASE WHEN s.n IS NOT NULL THEN u.rsum WHEN u.mean > 0 THEN 1 / u.mean END AS rsum
FROM summary_month s,
     unnest(s.run_ids, s.mean, s.n, s.m2, s.min, s.max, s.rsum)
	AS u(run_id, mean, n, m2, min, max, rsum);

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
		'INSERT INTO summary_month (key_group_id, metric_id, month, run_ids, mean, n, m2,'
		'  min, max, rsum)'
		' SELECT kg, metric_id, %L::date, array_agg(run_id ORDER BY run_id),'
		'  array_agg(mean ORDER BY run_id),'
		'  CASE WHEN max(n) > 1 THEN array_agg(n ORDER BY run_id) END,'
		'  CASE WHEN max(n) > 1 THEN array_agg(m2 ORDER BY run_id) END,'
		'  CASE WHEN max(n) > 1 THEN array_agg(mn ORDER BY run_id) END,'
		'  CASE WHEN max(n) > 1 THEN array_agg(mx ORDER BY run_id) END,'
		'  CASE WHEN max(n) > 1 THEN array_agg(rsum ORDER BY run_id) END'
		' FROM (SELECT min(key_group_id) AS kg, run_id, metric_id, count(*)::int AS n,'
		'   avg(value) AS mean, coalesce(var_samp(value) * (count(*) - 1), 0) AS m2,'
		'   min(value) AS mn, max(value) AS mx,'
		'   CASE WHEN min(value) > 0 THEN sum(1 / value) END AS rsum'
		'  FROM public.%I GROUP BY run_id, metric_id) r'
		' GROUP BY kg, metric_id', m, part);
	SELECT coalesce(sum(cardinality(run_ids)), 0) INTO nsum FROM summary_month WHERE month = m;
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
	SELECT coalesce(sum(cardinality(run_ids)), 0) INTO nsum FROM summary_month WHERE month = m;
	DELETE FROM summary_month WHERE month = m;
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
