-- 013_jobs: work for the labs. A job asks for `runs` runs of one test and
-- variant on one commit, on one machine or on any machine that offers the
-- test. Lab agents claim jobs (a lease, extended by heartbeats; a lease run
-- out puts the job back), post runs naming the job, and fail it with a reason
-- (three failures end it). kperfd never sends a command: a job names a test,
-- the agent's own catalogue says how to run it.
CREATE TABLE job (
	id           bigserial PRIMARY KEY,
	commit_id    bigint NOT NULL REFERENCES commits(id),
	machine_id   bigint REFERENCES machine(id),        -- NULL: any machine with the test
	test_id      bigint NOT NULL REFERENCES test(id),
	variant_id   bigint NOT NULL REFERENCES variant(id),
	runs         integer NOT NULL CHECK (runs BETWEEN 1 AND 100),
	priority     integer NOT NULL DEFAULT 0,
	reason       text,
	state        text NOT NULL DEFAULT 'queued'
		CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
	leased_to    bigint REFERENCES machine(id),
	lease_s      integer NOT NULL DEFAULT 1800,
	lease_until  timestamptz,
	attempts     integer NOT NULL DEFAULT 0,           -- failures counted
	failures     jsonb NOT NULL DEFAULT '[]',          -- [{at, machine, reason}]
	runs_done    integer NOT NULL DEFAULT 0,
	bisection_id bigint,
	decision_id  bigint,
	created_at   timestamptz NOT NULL DEFAULT now(),
	claimed_at   timestamptz,
	ended_at     timestamptz
);
CREATE INDEX job_queued ON job (test_id, priority DESC, id) WHERE state = 'queued';
CREATE INDEX job_running ON job (lease_until) WHERE state = 'running';
CREATE INDEX job_commit ON job (commit_id);

-- The runs that counted toward a job.
CREATE TABLE job_run (
	job_id bigint NOT NULL REFERENCES job(id),
	run_id bigint NOT NULL REFERENCES run(id),
	PRIMARY KEY (job_id, run_id)
);

-- What each machine's agent offers (from its claims), for the /jobs page.
CREATE TABLE machine_offer (
	machine_id    bigint NOT NULL REFERENCES machine(id),
	test_id       bigint NOT NULL REFERENCES test(id),
	last_claim_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (machine_id, test_id)
);

-- A collector token may be bound to machine names (globs): it then writes
-- and claims for those machines only. NULL: any machine.
ALTER TABLE api_token ADD COLUMN machines text[];
