-- 002_decisions: per-commit regression decisions (one per trend key and
-- commit, against its parent or its series base), the queue of keys whose
-- decisions must be redone, and the change points found in trend histories.

CREATE TABLE decision (
	id                bigserial PRIMARY KEY,
	machine_id        bigint NOT NULL REFERENCES machine(id),
	test_id           bigint NOT NULL REFERENCES test(id),
	variant_id        bigint NOT NULL REFERENCES variant(id),
	metric_id         bigint NOT NULL REFERENCES metric(id),
	commit_id         bigint NOT NULL REFERENCES commits(id),
	base_commit_id    bigint NOT NULL REFERENCES commits(id),
	base_kind         text NOT NULL CHECK (base_kind IN ('parent', 'series_base')),
	direction         text NOT NULL CHECK (direction IN ('higher', 'lower', 'none')),
	base_n            integer NOT NULL,
	base_runs         integer NOT NULL,
	base_mean         double precision,
	base_stddev_pct   double precision,
	target_n          integer NOT NULL,
	target_runs       integer NOT NULL,
	target_mean       double precision,
	target_stddev_pct double precision,
	change_pct        double precision,
	change_abs        double precision,
	absolute          boolean NOT NULL DEFAULT false,
	p_value           double precision,
	ci_lo_pct         double precision,
	ci_hi_pct         double precision,
	test_used         text,
	lkp_changed       boolean NOT NULL,
	verdict           text NOT NULL
		CHECK (verdict IN ('regression', 'improvement', 'changed', 'noise')),
	kpi               boolean NOT NULL DEFAULT false,
	state             text NOT NULL DEFAULT 'new'
		CHECK (state IN ('new', 'acknowledged', 'invalid', 'fixed')),
	note              text,
	recovered_by      bigint REFERENCES commits(id),
	decided_at        timestamptz NOT NULL DEFAULT now(),
	created_at        timestamptz NOT NULL DEFAULT now(),
	updated_at        timestamptz NOT NULL DEFAULT now(),
	UNIQUE (machine_id, test_id, variant_id, metric_id, commit_id)
);
CREATE INDEX decision_list ON decision (verdict, created_at DESC, id DESC);
CREATE INDEX decision_commit ON decision (commit_id);
CREATE INDEX decision_open ON decision (machine_id, test_id, variant_id, metric_id)
	WHERE verdict = 'regression' AND recovered_by IS NULL;

-- A key group (commit, machine, test, variant) to decide. version grows with
-- each run that arrives, so a worker deletes the entry only when no run came
-- while it decided.
CREATE TABLE decision_queue (
	commit_id   bigint NOT NULL REFERENCES commits(id),
	machine_id  bigint NOT NULL REFERENCES machine(id),
	test_id     bigint NOT NULL REFERENCES test(id),
	variant_id  bigint NOT NULL REFERENCES variant(id),
	version     bigint NOT NULL DEFAULT 1,
	queued_at   timestamptz NOT NULL DEFAULT now(),
	claimed_at  timestamptz,
	PRIMARY KEY (commit_id, machine_id, test_id, variant_id)
);

CREATE TABLE change_point (
	id              bigserial PRIMARY KEY,
	machine_id      bigint NOT NULL REFERENCES machine(id),
	test_id         bigint NOT NULL REFERENCES test(id),
	variant_id      bigint NOT NULL REFERENCES variant(id),
	metric_id       bigint NOT NULL REFERENCES metric(id),
	commit_id       bigint NOT NULL REFERENCES commits(id), -- first commit after the step
	prev_commit_id  bigint NOT NULL REFERENCES commits(id), -- last commit before it
	shift_pct       double precision,
	ci_lo_pct       double precision,
	ci_hi_pct       double precision,
	p_value         double precision,
	detected_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX change_point_key ON change_point (machine_id, test_id, variant_id, metric_id);

-- Runs marked invalid by an admin keep their samples but leave every statistic.
ALTER TABLE run ADD COLUMN invalidated_at timestamptz;
