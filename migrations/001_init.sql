-- 001_init: the stored results. machine / commits / test / variant are the
-- dimensions of a trend key; run is one execution as posted (doc keeps it
-- exactly, for reads and idempotent re-posts); sample holds its values.

CREATE TABLE machine (
	id          bigserial PRIMARY KEY,
	name        text NOT NULL UNIQUE,
	cpu_model   text,
	nr_cpus     integer,
	sockets     integer,
	memory_mb   bigint,
	numa_nodes  integer,
	info        jsonb NOT NULL DEFAULT '{}',
	created_at  timestamptz NOT NULL DEFAULT now(),
	updated_at  timestamptz NOT NULL DEFAULT now()
);

-- A kernel: a commit (sha known) or, for runs that only know what they
-- booted, a release string with sha NULL.
CREATE TABLE commits (
	id             bigserial PRIMARY KEY,
	sha            text UNIQUE CHECK (sha ~ '^[0-9a-f]{40}$'),
	parent_sha     text CHECK (parent_sha ~ '^[0-9a-f]{40}$'),
	subject        text,
	author         text,
	committed_at   timestamptz,
	branch         text,
	release        text,
	describe       text,
	series         text,
	series_name    text,
	series_version integer,
	message_id     text,
	files          text[],
	created_at     timestamptz NOT NULL DEFAULT now(),
	CHECK (sha IS NOT NULL OR release IS NOT NULL)
);
CREATE UNIQUE INDEX commits_release_only ON commits (release) WHERE sha IS NULL;
CREATE INDEX commits_release ON commits (release);
CREATE INDEX commits_parent ON commits (parent_sha);
CREATE INDEX commits_series ON commits (series_name, series_version);

CREATE TABLE test (
	id      bigserial PRIMARY KEY,
	suite   text NOT NULL,
	params  jsonb NOT NULL DEFAULT '{}',
	UNIQUE (suite, params)
);

CREATE TABLE variant (
	id     bigserial PRIMARY KEY,
	knobs  jsonb NOT NULL UNIQUE
);

CREATE TABLE metric (
	id         bigserial PRIMARY KEY,
	name       text NOT NULL UNIQUE,
	unit       text,
	direction  text CHECK (direction IN ('higher', 'lower', 'none'))
);

CREATE TABLE api_token (
	id          bigserial PRIMARY KEY,
	name        text NOT NULL UNIQUE,
	role        text NOT NULL CHECK (role IN ('collector', 'admin')),
	hash        bytea NOT NULL UNIQUE,
	created_at  timestamptz NOT NULL DEFAULT now(),
	revoked_at  timestamptz
);

CREATE TABLE run (
	id           bigserial PRIMARY KEY,
	run_id       text NOT NULL UNIQUE,
	machine_id   bigint NOT NULL REFERENCES machine(id),
	commit_id    bigint NOT NULL REFERENCES commits(id),
	test_id      bigint NOT NULL REFERENCES test(id),
	variant_id   bigint NOT NULL REFERENCES variant(id),
	release      text,
	started_at   timestamptz,
	duration_s   double precision,
	exit_status  integer,
	valid        boolean NOT NULL DEFAULT true,
	token_id     bigint REFERENCES api_token(id),
	received_at  timestamptz NOT NULL DEFAULT now(),
	doc          jsonb NOT NULL
);
CREATE INDEX run_key ON run (machine_id, test_id, variant_id, commit_id);
CREATE INDEX run_commit ON run (commit_id);
CREATE INDEX run_release ON run (release);
CREATE INDEX run_newest ON run ((coalesce(started_at, received_at)) DESC, id DESC);

CREATE TABLE sample (
	run_id     bigint NOT NULL REFERENCES run(id) ON DELETE CASCADE,
	metric_id  bigint NOT NULL REFERENCES metric(id),
	iteration  integer NOT NULL,
	value      double precision NOT NULL,
	PRIMARY KEY (run_id, metric_id, iteration)
);
CREATE INDEX sample_metric ON sample (metric_id);
