-- 016_metric_role: what a decided metric is to its reader (metric_role.c):
-- the benchmark's KPI, an event counter next to it, an informational row
-- (totals, sums, elapsed times, stddevs, rusage) or a machine monitor
-- (page-cache gauges, memcg sizes, perf-profile rows). kperfd sets it with
-- every decision and, at start, on decisions stored before it knew the
-- role (role_checked false). kpi stays as role = 'kpi'.
ALTER TABLE decision ADD COLUMN role text NOT NULL DEFAULT 'info'
	CHECK (role IN ('kpi', 'event', 'info', 'monitor'));
-- kpi_rank orders a commit's KPIs, the headline first (metric_kpi_rank).
ALTER TABLE decision ADD COLUMN kpi_rank smallint;
ALTER TABLE decision ADD COLUMN role_checked boolean NOT NULL DEFAULT false;
CREATE INDEX decision_role_unchecked ON decision (test_id, metric_id) WHERE NOT role_checked;

-- The focus families of DESIGN.md, one rule for the regressions list and
-- for subscriptions. lru_lock: the LRU lock's perf-profile and lock_stat
-- rows. mglru: runs with an lru_gen knob or of an MGLRU series, and of
-- those the benchmark's KPIs and the reclaim counters.
CREATE FUNCTION kperf_focus_matches(focus text, metric text, role text, knobs jsonb,
				    series_name text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
	SELECT CASE focus
	WHEN 'lru_lock' THEN strpos(metric, 'lruvec_lock') > 0
		OR strpos(metric, 'lock_page_lruvec') > 0
		OR starts_with(metric, 'lock_stat.&lruvec->lru_lock.')
		OR starts_with(metric, 'lock_stat.&pgdat->lru_lock.')
	WHEN 'mglru' THEN (knobs ? 'lru_gen' OR coalesce(series_name ~* '(mglru|lru_gen|multi-gen)', false))
		AND (role = 'kpi' OR metric ~ ('^proc-vmstat\.(pgscan_|pgsteal_|workingset_refault|'
			'pgactivate$|pgdeactivate$|pswpin$|pswpout$)'))
	ELSE false END
$$;

-- A subscription names a metric when its pattern's program part (before
-- the first '.') has no wildcard: only such a one is mailed an
-- informational row or a monitor.
DROP VIEW decision_facts CASCADE;
CREATE VIEW decision_facts AS
	SELECT d.*, mt.name AS metric, t.suite, m.name AS machine, v.knobs, c.sha,
	       c.series, c.series_name, c.files
	FROM decision d JOIN metric mt ON mt.id = d.metric_id JOIN test t ON t.id = d.test_id
	JOIN machine m ON m.id = d.machine_id JOIN variant v ON v.id = d.variant_id
	JOIN commits c ON c.id = d.commit_id;

CREATE FUNCTION subscription_matches(s subscription, f decision_facts) RETURNS boolean
LANGUAGE sql STABLE AS $$
	SELECT s.unsubscribed_at IS NULL
	   AND f.verdict = ANY (s.verdicts)
	   AND (f.role IN ('kpi', 'event')
		OR (s.metric IS NOT NULL AND split_part(s.metric, '.', 1) !~ '[*?\[]'))
	   AND (s.min_change_pct IS NULL
		OR (CASE WHEN f.absolute THEN abs(f.change_abs) ELSE abs(f.change_pct) END)
		   >= s.min_change_pct)
	   AND (s.suite IS NULL OR f.suite = s.suite)
	   AND (s.machine IS NULL OR f.machine = s.machine)
	   AND (s.metric_like IS NULL OR f.metric LIKE s.metric_like)
	   AND (s.series IS NULL OR f.series = s.series OR f.series_name = s.series)
	   AND (s.files_like IS NULL OR EXISTS (SELECT 1 FROM unnest(f.files) AS fl(file),
			unnest(s.files_like) AS pl(pattern) WHERE fl.file LIKE pl.pattern))
	   AND (s.focus IS NULL
		OR kperf_focus_matches(s.focus, f.metric, f.role, f.knobs, f.series_name))
$$;
