-- 005_sample_partitions: samples partitioned by time (the month their run
-- arrived), so history can grow to billions of rows while ingest writes into
-- one small current partition and reads touch only the partitions of the runs
-- they read. A sample carries its run's received_at (`at`); every read joins
-- on (run_id, at) so PostgreSQL prunes the other months at run time.
--
-- The foreign keys of 001 are gone: checking two of them per sample cost more
-- than storing the sample. kperfd writes a run's samples in the transaction
-- that inserts the run, runs are never deleted (an admin marks them invalid)
-- and neither are metrics, so the references hold by construction.

CREATE TABLE sample_new (
	at         timestamptz NOT NULL,
	run_id     bigint NOT NULL,
	metric_id  bigint NOT NULL,
	iteration  integer NOT NULL,
	value      double precision NOT NULL,
	PRIMARY KEY (run_id, metric_id, iteration, at)
) PARTITION BY RANGE (at);

-- Rows of a month without its partition land here; kperfd keeps the next
-- months' partitions made ahead, so in practice it stays empty.
CREATE TABLE sample_default PARTITION OF sample_new DEFAULT;

-- Make the monthly partitions [first, last] (months, UTC) that do not exist.
-- Called by this migration, by kperfd at start and by its worker every hour.
CREATE FUNCTION kperf_sample_partitions(first timestamptz, last timestamptz)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
	-- UTC wall-clock months, so the session's time zone cannot shift a bound
	m timestamp := date_trunc('month', first AT TIME ZONE 'UTC');
	made integer := 0;
	name text;
BEGIN
	WHILE m AT TIME ZONE 'UTC' <= last LOOP
		name := 'sample_' || to_char(m, 'YYYYMM');
		IF to_regclass(name) IS NULL THEN
			EXECUTE format('CREATE TABLE %I PARTITION OF sample FOR VALUES FROM (%L) TO (%L)',
				name, m AT TIME ZONE 'UTC', (m + interval '1 month') AT TIME ZONE 'UTC');
			made := made + 1;
		END IF;
		m := m + interval '1 month';
	END LOOP;
	RETURN made;
END $$;

INSERT INTO sample_new (at, run_id, metric_id, iteration, value)
	SELECT r.received_at, s.run_id, s.metric_id, s.iteration, s.value
	FROM sample s JOIN run r ON r.id = s.run_id;
DROP TABLE sample;
ALTER TABLE sample_new RENAME TO sample;
ALTER TABLE sample RENAME CONSTRAINT sample_new_pkey TO sample_pkey;

-- Move the copied rows out of the default partition into their months.
CREATE TEMP TABLE sample_moved ON COMMIT DROP AS SELECT * FROM sample_default;
DELETE FROM sample_default;
SELECT kperf_sample_partitions(coalesce((SELECT min(at) FROM sample_moved), now()),
	now() + interval '2 months');
INSERT INTO sample SELECT * FROM sample_moved;
