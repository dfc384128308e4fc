-- capacity-settle.sql - after a step of tests/bench/capacity.sh: the
-- visibility maps and statistics a lab's autovacuum would have made (the
-- history months were frozen and analysed as they were built, so VACUUM
-- only skips over them), then the dirty pages written out.
SET client_min_messages = warning;
VACUUM sample;
VACUUM ANALYZE run, commits, metric, machine, test, variant, key_group, cap_group;
SELECT format('ANALYZE %I', c.relname) FROM pg_partition_tree('sample') t
JOIN pg_class c ON c.oid = t.relid
WHERE t.isleaf AND (c.relname !~ '^sample_[0-9]{6}$'
	OR to_date(substr(c.relname, 8), 'YYYYMM') >= (SELECT last FROM cap_window)) \gexec
CHECKPOINT;
