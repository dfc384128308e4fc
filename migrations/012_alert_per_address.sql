-- 012_alert_per_address: one message per address and commit (and per address
-- and day for digests). Subscriptions still queue one outbox row each; the
-- mailer that claims one renders a single message for every subscription of
-- the same address (lower(email)), lists the union of their decisions, and
-- marks the other rows it took 'merged' into it. subscription_ids says which
-- subscriptions a message serves. Threads follow the address, not the
-- subscription, so a second subscription of a reader joins the thread the
-- first one started.
ALTER TABLE alert DROP CONSTRAINT alert_state_check;
ALTER TABLE alert ADD CONSTRAINT alert_state_check
	CHECK (state IN ('pending', 'sending', 'sent', 'failed', 'skipped', 'merged'));
ALTER TABLE alert ADD COLUMN merged_into bigint REFERENCES alert(id);
ALTER TABLE alert ADD COLUMN subscription_ids bigint[];

CREATE INDEX subscription_address ON subscription (lower(email)) WHERE unsubscribed_at IS NULL;

CREATE TABLE alert_thread_rcpt (
	rcpt            text NOT NULL,  -- lower(email)
	topic           text NOT NULL,  -- 'series:<name>' or 'commit:<sha>'
	root_message_id text NOT NULL,
	PRIMARY KEY (rcpt, topic)
);
INSERT INTO alert_thread_rcpt (rcpt, topic, root_message_id)
	SELECT DISTINCT ON (lower(s.email), t.topic) lower(s.email), t.topic, t.root_message_id
	FROM alert_thread t JOIN subscription s ON s.id = t.subscription_id
	ORDER BY lower(s.email), t.topic, t.subscription_id
	ON CONFLICT DO NOTHING;
