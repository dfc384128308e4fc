-- 003_alerts: subscriptions, the mail outbox and what was mailed. A message
-- is rendered once, when it is claimed, and stored, so a retry (or a re-send
-- after a crash) carries the same Message-ID and text.

CREATE TABLE subscription (
	id              bigserial PRIMARY KEY,
	email           text NOT NULL,
	focus           text CHECK (focus IN ('lru_lock', 'mglru')),
	series          text,
	suite           text,
	metric          text,        -- a glob, as given
	metric_like     text,        -- the same as a LIKE pattern
	machine         text,
	files           text[],      -- globs, as given
	files_like      text[],
	min_change_pct  double precision,
	verdicts        text[] NOT NULL DEFAULT '{regression}',
	delivery        text NOT NULL DEFAULT 'immediate' CHECK (delivery IN ('immediate', 'daily')),
	created_at      timestamptz NOT NULL DEFAULT now(),
	unsubscribed_at timestamptz
);

-- Secrets every kperfd of one database shares (the unsubscribe link's key).
CREATE TABLE kperf_secret (
	name   text PRIMARY KEY,
	value  bytea NOT NULL
);

-- A decision with the names its subscriptions filter on.
CREATE VIEW decision_facts AS
	SELECT d.*, mt.name AS metric, t.suite, m.name AS machine, v.knobs, c.sha,
	       c.series, c.series_name, c.files
	FROM decision d JOIN metric mt ON mt.id = d.metric_id JOIN test t ON t.id = d.test_id
	JOIN machine m ON m.id = d.machine_id JOIN variant v ON v.id = d.variant_id
	JOIN commits c ON c.id = d.commit_id;

-- Every given filter must match (DESIGN.md's focus families included).
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

CREATE TABLE alert (
	id              bigserial PRIMARY KEY,
	subscription_id bigint NOT NULL REFERENCES subscription(id),
	commit_id       bigint REFERENCES commits(id),   -- NULL for a digest
	kind            text NOT NULL CHECK (kind IN ('report', 'digest')),
	state           text NOT NULL DEFAULT 'pending'
		CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'skipped')),
	due_at          timestamptz NOT NULL,
	next_attempt_at timestamptz NOT NULL DEFAULT now(),
	claimed_at      timestamptz,
	attempts        integer NOT NULL DEFAULT 0,
	last_error      text,
	rcpt            text,
	subject         text,
	message_id      text,
	message         text,        -- the whole RFC 5322 message, CRLF lines
	created_at      timestamptz NOT NULL DEFAULT now(),
	sent_at         timestamptz
);
CREATE UNIQUE INDEX alert_pending ON alert (subscription_id, (coalesce(commit_id, 0)), kind)
	WHERE state = 'pending';
CREATE INDEX alert_due ON alert (state, due_at);

-- What a subscriber was told about a decision, for follow-ups.
CREATE TABLE alert_mailed (
	subscription_id bigint NOT NULL REFERENCES subscription(id),
	decision_id     bigint NOT NULL REFERENCES decision(id),
	alert_id        bigint NOT NULL REFERENCES alert(id),
	verdict         text NOT NULL,
	change_pct      double precision,
	recovered       boolean NOT NULL DEFAULT false,
	PRIMARY KEY (subscription_id, decision_id)
);

-- Threads: per subscriber and series (or commit), the first message's id.
CREATE TABLE alert_thread (
	subscription_id bigint NOT NULL REFERENCES subscription(id),
	topic           text NOT NULL,  -- 'series:<name>' or 'commit:<sha>'
	root_message_id text NOT NULL,
	PRIMARY KEY (subscription_id, topic)
);
