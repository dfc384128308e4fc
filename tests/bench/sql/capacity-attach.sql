-- capacity-attach.sql - one history month of tests/bench/capacity.sh built
-- the fast way and put in place, in one transaction: a plain table with the
-- month's bound as a CHECK (so ATTACH need not scan it), filled by COPY
-- FREEZE from psql's standard input (capacity-month.sql's rows: frozen and
-- all-visible at once, so no VACUUM pass rewrites it and index-only scans
-- see it visible), then its primary key and key-group index built by sort
-- (as kperf's own, migrations 005 and 008: ATTACH adopts them), and the
-- month's earlier table (the step before) swapped out; then ANALYZE. With
-- wal_level=minimal none of it is written to the WAL. Variables: :tbl
-- (sample_YYYYMM), :lo, :hi, :pk, :kg (the index names).
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
BEGIN;
CREATE TABLE cap_month (LIKE sample, CONSTRAINT cap_month_range CHECK (at >= :'lo' AND at < :'hi'));
\copy cap_month FROM pstdin (FORMAT binary, FREEZE)
ALTER TABLE cap_month ADD CONSTRAINT cap_month_pkey PRIMARY KEY (run_id, metric_id, iteration, at);
CREATE INDEX cap_month_kg ON cap_month (key_group_id, metric_id, run_id, iteration) INCLUDE (value);
SELECT to_regclass(:'tbl') IS NOT NULL AS had \gset
\if :had
ALTER TABLE sample DETACH PARTITION :"tbl";
DROP TABLE :"tbl";
\endif
ALTER TABLE cap_month RENAME TO :"tbl";
ALTER INDEX cap_month_pkey RENAME TO :"pk";
ALTER INDEX cap_month_kg RENAME TO :"kg";
ALTER TABLE sample ATTACH PARTITION :"tbl" FOR VALUES FROM (:'lo') TO (:'hi');
ALTER TABLE :"tbl" DROP CONSTRAINT cap_month_range;
COMMIT;
-- after the COMMIT: analysed inside it, the month's inserts (counted at
-- commit) would have autovacuum analyse it again during the measurements
ANALYZE :"tbl";
