-- 004_triage_history: every triage change of a decision, who made it and
-- when, for the regression page's history.
CREATE TABLE decision_event (
	id           bigserial PRIMARY KEY,
	decision_id  bigint NOT NULL REFERENCES decision(id),
	state        text NOT NULL,
	note         text,
	token_name   text,
	at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX decision_event_decision ON decision_event (decision_id, id);
