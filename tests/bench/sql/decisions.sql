-- decisions.sql - per-commit decisions for the regressions list: on each
-- read machine, every 10th commit against its parent, 20 metrics each.
INSERT INTO decision (machine_id, test_id, variant_id, metric_id, commit_id, base_commit_id,
	base_kind, direction, base_n, base_runs, base_mean, base_stddev_pct, target_n, target_runs,
	target_mean, target_stddev_pct, change_pct, p_value, ci_lo_pct, ci_hi_pct, test_used,
	lkp_changed, verdict, kpi, created_at)
SELECT r.machine_id, r.test_id, r.variant_id, m.id, r.commit_id, p.id, 'parent',
       m.direction, 1, 1, 1000, 1, 1, 1, 1030, 1, 3.0, 0.001, 1.5, 4.5, 'welch', true,
       (ARRAY['regression', 'improvement', 'changed', 'noise'])[1 + (r.commit_id + m.id) % 4],
       m.id % 5 = 0, r.received_at
FROM run r JOIN commits c ON c.id = r.commit_id JOIN commits p ON p.sha = c.parent_sha
CROSS JOIN (SELECT id, direction FROM metric WHERE name LIKE 'wis.m%' ORDER BY name LIMIT 20) m
WHERE r.run_id LIKE 'read-%' AND c.id % 10 = 0
ON CONFLICT DO NOTHING;
