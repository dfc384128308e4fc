-- 017_run_command: the benchmark's command line of a run, as posted
-- ("command"), kept beside the compressed document so that compares and
-- the decision worker read it without decompressing the document. Two
-- sides whose commands differ in an argument that sets the amount of work
-- (command.c) measured different work, not a different kernel.
ALTER TABLE run ADD COLUMN command text GENERATED ALWAYS AS (doc->>'command') STORED;

-- A decision whose sides ran the benchmark with different work arguments
-- ("time 3 -> 2"): stored, shown, but no kernel change: it is neither
-- confirmed, bisected nor mailed.
ALTER TABLE decision ADD COLUMN command_differs text;

-- decision_facts lists d.*: made again with role (016) and command_differs.
-- A subscription names a metric when its pattern's program part (before
-- the first '.') has no wildcard: only such a one is mailed an
-- informational row or a monitor (016's roles).
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
	   AND f.command_differs IS NULL
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
