-- 014_confirm_bisect: the lab loop's policies (issue 19).
--
-- A decision's base may now be its nearest first-parent ancestor with runs
-- of the key ('ancestor'), when neither the parent nor a series base has any.
--
-- Confirmation: a regression or improvement of a KPI decided from fewer runs
-- than KPERF_CONFIRM_RUNS on either side is 'waiting' while jobs for the
-- missing runs run; decided again with them it is 'confirmed' (still a
-- change) or 'refuted' (noise now). Its commit's mail waits meanwhile, at
-- most KPERF_CONFIRM_TIMEOUT_S, then goes out saying it is unconfirmed.
-- NULL: nothing to confirm (enough runs from the start, or not a change).
--
-- Bisection: a confirmed KPI regression whose base is not the commit's
-- parent is bisected on the first-parent chain from its base (good) to it
-- (bad). chain holds that chain's commit ids, good first. Decisions of the
-- same key and metric on the chain belong to the bisection (bisection_id)
-- and are not mailed, except the one at the first bad commit once found.
ALTER TABLE decision DROP CONSTRAINT decision_base_kind_check;
ALTER TABLE decision ADD CONSTRAINT decision_base_kind_check
	CHECK (base_kind IN ('parent', 'series_base', 'ancestor'));
ALTER TABLE decision ADD COLUMN confirmation text
	CHECK (confirmation IN ('waiting', 'confirmed', 'refuted', 'unconfirmed'));
ALTER TABLE decision ADD COLUMN confirm_started_at timestamptz;
ALTER TABLE decision ADD COLUMN bisection_id bigint;
CREATE INDEX decision_waiting ON decision (commit_id) WHERE confirmation = 'waiting';

CREATE TABLE bisection (
	id                   bigserial PRIMARY KEY,
	decision_id          bigint REFERENCES decision(id),  -- NULL: started by hand
	machine_id           bigint NOT NULL REFERENCES machine(id),
	test_id              bigint NOT NULL REFERENCES test(id),
	variant_id           bigint NOT NULL REFERENCES variant(id),
	metric_id            bigint NOT NULL REFERENCES metric(id),
	good_commit_id       bigint NOT NULL REFERENCES commits(id),
	bad_commit_id        bigint NOT NULL REFERENCES commits(id),
	chain                bigint[] NOT NULL,
	state                text NOT NULL DEFAULT 'running'
		CHECK (state IN ('running', 'found', 'inconclusive')),
	reason               text,
	first_bad_commit_id  bigint REFERENCES commits(id),
	last_good_commit_id  bigint REFERENCES commits(id),
	started_at           timestamptz NOT NULL DEFAULT now(),
	ended_at             timestamptz
);
CREATE INDEX bisection_key ON bisection (machine_id, test_id, variant_id, metric_id);

-- A commit of the chain judged: against the good end and against the bad end.
CREATE TABLE bisection_step (
	bisection_id       bigint NOT NULL REFERENCES bisection(id),
	commit_id          bigint NOT NULL REFERENCES commits(id),
	runs               integer NOT NULL,
	change_pct_vs_good double precision,
	verdict_vs_good    text NOT NULL,
	verdict_vs_bad     text NOT NULL,
	class              text NOT NULL CHECK (class IN ('good', 'bad', 'unclear')),
	job_id             bigint REFERENCES job(id),
	judged_at          timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (bisection_id, commit_id)
);

-- decision_facts lists d.*: made again to carry the new columns (and the
-- function over its row type with it).
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
		OR (s.focus = 'lru_lock' AND (strpos(f.metric, 'lruvec_lock') > 0
			OR strpos(f.metric, 'lock_page_lruvec') > 0
			OR starts_with(f.metric, 'lock_stat.&lruvec->lru_lock.')
			OR starts_with(f.metric, 'lock_stat.&pgdat->lru_lock.')))
		OR (s.focus = 'mglru' AND (f.knobs ? 'lru_gen'
			OR f.series_name ~* '(mglru|lru_gen|multi-gen)')))
$$;
