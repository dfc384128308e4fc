-- capacity-month.sql - every sample of one history month of
-- tests/bench/capacity.sh, as COPY's binary rows in the column order of
-- `sample` (at, run_id, metric_id, iteration, value, key_group_id), in
-- arrival order: run by run (received_at, id), each run's metrics and
-- iterations in order, as kperfd's COPY writes a run. Variables: :lo, :hi
-- (the month's bounds), :m0 (the id of lab.m0000; the 5,000 names are one
-- id range). The runs are ordered once (a few thousand); the rows are made
-- by a nested loop over them, so nothing of the month's size is sorted.
COPY (
	SELECT r.received_at, r.id, (:m0 + k)::bigint, it,
	       cap_value(r.id, k, it, r.target, r.ci), r.key_group_id
	FROM (SELECT r.id, r.received_at, cg.key_group_id, cg.nmetrics, cg.niters,
		     left(c.sha, 2) = 'fc' AS target,
		     CASE WHEN left(c.sha, 2) = 'fa' THEN substr(c.sha, 3)::integer ELSE 0 END AS ci
	      FROM run r JOIN commits c ON c.id = r.commit_id
	      JOIN key_group g USING (machine_id, test_id, variant_id)
	      JOIN cap_group cg ON cg.key_group_id = g.id
	      WHERE r.received_at >= :'lo' AND r.received_at < :'hi'
	      ORDER BY r.received_at, r.id OFFSET 0) r
	CROSS JOIN LATERAL generate_series(0, r.nmetrics - 1) k
	CROSS JOIN LATERAL generate_series(0, r.niters - 1) it
) TO STDOUT (FORMAT binary);
