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
