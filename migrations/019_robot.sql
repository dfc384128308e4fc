-- 019_robot: patch series read from mailing-list archives (public-inbox),
-- the plans that test them in the labs, and the replies sent in their
-- threads.
--
-- An inbox is polled over HTTP (its Atom feed, then each new thread's
-- mbox). Each [PATCH] thread found there is a posted_series: one version of
-- a series, its cover letter (or first patch) and its patches in order,
-- with the base the author named. Versions of one series share series_key
-- (b4's change-id, else the subject stem and the author's address).
CREATE TABLE inbox (
	id             bigserial PRIMARY KEY,
	name           text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9._-]{1,64}$'),
	url            text NOT NULL CHECK (url ~ '^https?://[^/]+/.*/$'),
	list           text,
	query          text,
	poll_s         integer NOT NULL DEFAULT 300 CHECK (poll_s BETWEEN 1 AND 86400),
	created_at     timestamptz NOT NULL DEFAULT now(),
	last_poll_at   timestamptz,
	last_result    text,          -- 'ok', or what went wrong
	last_ok_at     timestamptz,
	failures       integer NOT NULL DEFAULT 0,  -- in a row; the backoff doubles with each
	next_poll_at   timestamptz NOT NULL DEFAULT now(),
	messages_seen  bigint NOT NULL DEFAULT 0,
	series_found   bigint NOT NULL DEFAULT 0
);

-- Feed entries taken in: a head whose thread was read (state 'done'), or
-- one waiting for the rest of its patches to arrive ('incomplete', tried
-- again at each poll up to a bound), or refused with the reason.
CREATE TABLE inbox_seen (
	inbox_id   bigint NOT NULL REFERENCES inbox(id),
	msgid      text NOT NULL,
	state      text NOT NULL CHECK (state IN ('done', 'incomplete', 'refused')),
	tries      integer NOT NULL DEFAULT 1,
	reason     text,
	seen_at    timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (inbox_id, msgid)
);

CREATE TABLE posted_series (
	id             bigserial PRIMARY KEY,
	inbox_id       bigint NOT NULL REFERENCES inbox(id),
	head_msgid     text NOT NULL,        -- the cover letter, or the first patch
	has_cover      boolean NOT NULL,
	series_key     text NOT NULL,
	name           text NOT NULL,        -- the subject without its [PATCH ...] tag
	version        integer NOT NULL CHECK (version BETWEEN 1 AND 1000),
	rfc            boolean NOT NULL DEFAULT false,
	subject        text NOT NULL,
	author_name    text,
	author_email   text,
	change_id      text,
	base_sha       text CHECK (base_sha ~ '^[0-9a-f]{40}$'),
	prerequisites  text[] NOT NULL DEFAULT '{}',
	total          integer NOT NULL CHECK (total BETWEEN 1 AND 500),
	previous_id    bigint REFERENCES posted_series(id),
	state          text NOT NULL DEFAULT 'posted'
		CHECK (state IN ('posted', 'queued', 'applied', 'does_not_apply', 'regression',
				 'improvement', 'clean', 'failed', 'no_base')),
	state_detail   text,
	posted_at      timestamptz,           -- the feed's arrival time of the head
	created_at     timestamptz NOT NULL DEFAULT now(),
	updated_at     timestamptz NOT NULL DEFAULT now(),
	UNIQUE (inbox_id, head_msgid)
);
CREATE INDEX posted_series_key ON posted_series (series_key, version);

CREATE TABLE posted_patch (
	series_id    bigint NOT NULL REFERENCES posted_series(id),
	position     integer NOT NULL CHECK (position >= 1),
	msgid        text NOT NULL,
	subject      text NOT NULL,
	author_name  text,
	author_email text,
	files        text[] NOT NULL DEFAULT '{}',
	commit_id    bigint REFERENCES commits(id),  -- once a lab applied it
	PRIMARY KEY (series_id, position)
);
CREATE INDEX posted_patch_commit ON posted_patch (commit_id) WHERE commit_id IS NOT NULL;

-- A plan: which series (of an inbox, by subject and files) or which
-- branch heads are tested, with which tests, on which machines, how many
-- runs, and how the result is reported.
CREATE TABLE plan (
	id             bigserial PRIMARY KEY,
	name           text NOT NULL UNIQUE CHECK (name ~ '^[A-Za-z0-9._-]{1,64}$'),
	inbox_id       bigint REFERENCES inbox(id),
	branch         text,
	subject_glob   text,
	files_globs    text[] NOT NULL DEFAULT '{}',
	tests          jsonb NOT NULL,       -- [{suite, params}], params canonical
	machines       text[] NOT NULL DEFAULT '{*}',
	runs           integer NOT NULL DEFAULT 3 CHECK (runs BETWEEN 1 AND 100),
	report_mode    text NOT NULL DEFAULT 'hold' CHECK (report_mode IN ('send', 'hold')),
	report_cc      text[] NOT NULL DEFAULT '{}',
	report_clean   boolean NOT NULL DEFAULT false,
	report_regzbot boolean NOT NULL DEFAULT false,
	created_at     timestamptz NOT NULL DEFAULT now(),
	CHECK ((inbox_id IS NULL) <> (branch IS NULL))
);

-- What a plan is testing: one series version, or one head of its branch,
-- against its base; state follows the work to its report.
CREATE TABLE plan_target (
	id             bigserial PRIMARY KEY,
	plan_id        bigint NOT NULL REFERENCES plan(id),
	series_id      bigint REFERENCES posted_series(id),
	head_commit_id bigint REFERENCES commits(id),
	base_commit_id bigint NOT NULL REFERENCES commits(id),
	state          text NOT NULL DEFAULT 'queued'
		CHECK (state IN ('queued', 'applied', 'does_not_apply', 'regression', 'improvement',
				 'clean', 'failed')),
	detail         text,
	first_bad_position integer,
	created_at     timestamptz NOT NULL DEFAULT now(),
	updated_at     timestamptz NOT NULL DEFAULT now(),
	CHECK ((series_id IS NULL) <> (head_commit_id IS NULL))
);
CREATE UNIQUE INDEX plan_target_series ON plan_target (plan_id, series_id) WHERE series_id IS NOT NULL;
CREATE UNIQUE INDEX plan_target_head ON plan_target (plan_id, head_commit_id)
	WHERE head_commit_id IS NOT NULL;
CREATE INDEX plan_target_open ON plan_target (id) WHERE state IN ('queued', 'applied');

-- A series job: its kernel is the base (commit_id until the lab reports
-- the commits it made, then the last of them) plus the first apply_patches
-- patches of series_id, applied by the lab from the inbox.
ALTER TABLE job ADD COLUMN series_id bigint REFERENCES posted_series(id);
ALTER TABLE job ADD COLUMN apply_patches integer CHECK (apply_patches BETWEEN 1 AND 500);
ALTER TABLE job ADD COLUMN plan_target_id bigint REFERENCES plan_target(id);
ALTER TABLE job ADD CHECK ((series_id IS NULL) = (apply_patches IS NULL));
CREATE INDEX job_plan_target ON job (plan_target_id) WHERE plan_target_id IS NOT NULL;

-- The robot's replies are outbox rows with no subscription, rendered when
-- queued; 'held' ones wait for an admin's release.
ALTER TABLE alert ALTER COLUMN subscription_id DROP NOT NULL;
ALTER TABLE alert DROP CONSTRAINT alert_kind_check;
ALTER TABLE alert ADD CONSTRAINT alert_kind_check CHECK (kind IN ('report', 'digest', 'robot'));
ALTER TABLE alert DROP CONSTRAINT alert_state_check;
ALTER TABLE alert ADD CONSTRAINT alert_state_check
	CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'skipped', 'merged', 'held'));
ALTER TABLE alert ADD COLUMN plan_target_id bigint REFERENCES plan_target(id);
ALTER TABLE alert ADD COLUMN robot_kind text
	CHECK (robot_kind IN ('regression', 'improvement', 'clean'));
ALTER TABLE alert ADD COLUMN in_reply_to text;
ALTER TABLE alert ADD COLUMN released_at timestamptz;
ALTER TABLE alert ADD CHECK ((kind = 'robot') = (plan_target_id IS NOT NULL));
CREATE UNIQUE INDEX alert_robot_once ON alert (plan_target_id, robot_kind) WHERE kind = 'robot';

-- The series a job's kernel carries, as the claim hands it to an agent:
-- {inbox, message_id, base, patches, name, version} or NULL. A series job
-- says so itself; a job on a commit a lab made from a posted patch (a
-- confirmation's or bisection's) is that patch's series up to it.
CREATE FUNCTION kperf_job_series(p_series bigint, p_patches integer, p_commit bigint)
RETURNS jsonb LANGUAGE sql STABLE AS $$
	SELECT jsonb_build_object('inbox', i.url, 'message_id', s.head_msgid, 'base', s.base_sha,
				  'patches', x.n, 'name', s.name, 'version', s.version,
				  'total', s.total)
	FROM (SELECT p_series AS sid, p_patches AS n WHERE p_series IS NOT NULL
	      UNION ALL
	      (SELECT pp.series_id, pp.position FROM posted_patch pp
	       WHERE p_series IS NULL AND pp.commit_id = p_commit ORDER BY pp.series_id DESC LIMIT 1)) x
	JOIN posted_series s ON s.id = x.sid JOIN inbox i ON i.id = s.inbox_id
	LIMIT 1
$$;

-- A glob (* and ?) as a LIKE pattern.
CREATE FUNCTION kperf_glob_like(g text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
	SELECT replace(replace(replace(replace(replace(g, '\', '\\'), '%', '\%'), '_', '\_'),
			       '*', '%'), '?', '_')
$$;

-- kperf_job_add with a job's series: the first p_patches patches of
-- p_series on top of p_commit (its base), for plan target p_target.
DROP FUNCTION kperf_job_add(bigint, bigint, bigint, bigint, integer, text, text, integer, integer,
			    bigint, bigint);
CREATE FUNCTION kperf_job_add(p_commit bigint, p_machine bigint, p_test bigint,
			      p_variant bigint, p_runs integer, p_kind text, p_reason text,
			      p_priority integer DEFAULT NULL, p_lease_s integer DEFAULT NULL,
			      p_decision bigint DEFAULT NULL, p_bisection bigint DEFAULT NULL,
			      p_series bigint DEFAULT NULL, p_patches integer DEFAULT NULL,
			      p_target bigint DEFAULT NULL)
RETURNS bigint LANGUAGE sql AS $$
	INSERT INTO job (commit_id, machine_id, test_id, variant_id, runs, priority, reason,
			 lease_s, decision_id, bisection_id, series_id, apply_patches, plan_target_id)
	VALUES (p_commit, p_machine, p_test, p_variant, p_runs,
		coalesce(p_priority, kperf_job_priority(p_kind)), p_reason,
		coalesce(p_lease_s, 1800), p_decision, p_bisection, p_series, p_patches, p_target)
	RETURNING id
$$;
