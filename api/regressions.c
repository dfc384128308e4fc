/*
 * regressions.c - /api/v1/regressions: the stored per-commit decisions,
 * newest first (benchmark KPIs and regressions first within a commit), with
 * how many key groups still wait to be decided; one with both sides'
 * samples, and triage by an admin. Also DELETE
 * /api/v1/runs/{run_id}: an admin marks a run invalid; its decisions are redone.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/db/db.h"
#include "lib/jsonw.h"
#include "lib/kperf_limits.h"
#include "lib/util.h"
#include "api/api.h"
#include "lib/ingest_decode.h"
#include "api/store.h"

/* The columns of one decision as a JSON object (d, c = commit, b = base...). */
#define DECISION_JSON                                                                          \
	"jsonb_build_object('id', d.id, 'machine', m.name, 'suite', t.suite, 'params', t.params," \
	" 'variant', v.knobs, 'metric', mt.name, 'direction', d.direction,"                      \
	" 'commit', coalesce(c.sha, c.release), 'subject', c.subject, 'release', c.release,"     \
	" 'series', c.series, 'base_commit', coalesce(b.sha, b.release), 'base_kind', d.base_kind," \
	" 'base', jsonb_build_object('n', d.base_n, 'runs', d.base_runs, 'mean', d.base_mean,"   \
	"   'stddev_pct', d.base_stddev_pct),"                                                   \
	" 'target', jsonb_build_object('n', d.target_n, 'runs', d.target_runs, 'mean',"          \
	"   d.target_mean, 'stddev_pct', d.target_stddev_pct),"                                  \
	" 'change_pct', d.change_pct, 'change_abs', d.change_abs, 'absolute', d.absolute,"       \
	" 'welch', jsonb_build_object('p_value', d.p_value, 'ci95_pct',"                         \
	"   CASE WHEN d.ci_lo_pct IS NULL THEN NULL"                                             \
	"   ELSE jsonb_build_array(d.ci_lo_pct, d.ci_hi_pct) END),"                              \
	" 'test', d.test_used, 'lkp_changed', d.lkp_changed, 'verdict', d.verdict, 'kpi', d.kpi," \
	" 'role', d.role, 'kpi_rank', d.kpi_rank, 'command_differs', d.command_differs," \
	" 'state', d.state, 'note', d.note, 'recovered_by', rc.sha,"                             \
	" 'confirmation', d.confirmation, 'bisection', d.bisection_id,"                          \
	" 'bisected_to', (SELECT fb.sha FROM bisection bb JOIN commits fb"                       \
	"   ON fb.id = bb.first_bad_commit_id WHERE bb.id = d.bisection_id AND bb.state = 'found'),"\
	" 'decided_at', d.decided_at, 'created_at', d.created_at, 'updated_at', d.updated_at)"

#define DECISION_FROM                                                                          \
	" FROM decision d JOIN machine m ON m.id = d.machine_id JOIN test t ON t.id = d.test_id" \
	" JOIN variant v ON v.id = d.variant_id JOIN metric mt ON mt.id = d.metric_id"           \
	" JOIN commits c ON c.id = d.commit_id JOIN commits b ON b.id = d.base_commit_id"        \
	" LEFT JOIN commits rc ON rc.id = d.recovered_by"

/* Focus families of DESIGN.md: lru_lock contention rows; MGLRU runs. */
/* The filters read only decision; names are looked up in subqueries, so
 * counting a long list joins nothing. JSON is built for the page alone. */
#define LIST_ORDER                                                                       \
	" created_at DESC, kpi DESC, verdict = 'regression' DESC, kpi_rank NULLS LAST,"         \
	" abs(change_pct) DESC NULLS LAST," \
	" id DESC"
/*
 * What is still to be decided (regress.c's queue), under the list's machine,
 * suite and series filters: key groups (machine, test, variant) with queued
 * work, and queued decisions (a key group at one commit). A fresh import
 * shows there until the workers are through it, so an empty list is not
 * taken for "no findings" while it is still being judged.
 */
#define PENDING_QUEUE                                                                    \
	" decision_queue q WHERE ($4::text IS NULL OR q.machine_id IN"                      \
	"  (SELECT id FROM machine WHERE name = $4))"                                        \
	"  AND ($5::text IS NULL OR q.test_id IN (SELECT id FROM test WHERE suite = $5))"    \
	"  AND ($6::text IS NULL OR q.commit_id IN (SELECT id FROM commits"                  \
	"   WHERE series = $6 OR series_name = $6))"
#define PENDING                                                                          \
	" (SELECT count(*) FROM (SELECT DISTINCT q.machine_id, q.test_id, q.variant_id FROM" \
	PENDING_QUEUE ") p), (SELECT count(*) FROM" PENDING_QUEUE ")"

static const char SQL_LIST[] =
	"WITH f AS MATERIALIZED (SELECT d.id, d.created_at, d.kpi, d.kpi_rank, d.verdict, d.change_pct"
	" FROM decision d"
	" WHERE d.verdict = ANY($1::text[])"
	"  AND ($2::text IS NULL OR d.state = $2)"
	"  AND ($3::timestamptz IS NULL OR d.created_at >= $3::timestamptz)"
	"  AND ($4::text IS NULL OR d.machine_id IN (SELECT id FROM machine WHERE name = $4))"
	"  AND ($5::text IS NULL OR d.test_id IN (SELECT id FROM test WHERE suite = $5))"
	"  AND ($6::text IS NULL OR d.commit_id IN (SELECT id FROM commits"
	"   WHERE series = $6 OR series_name = $6))"
	"  AND d.role = ANY($10::text[])"
	"  AND ($7::text IS NULL OR EXISTS (SELECT 1 FROM metric mt, variant v, commits c"
	"   WHERE mt.id = d.metric_id AND v.id = d.variant_id AND c.id = d.commit_id"
	"   AND kperf_focus_matches($7, mt.name, d.role, v.knobs, c.series_name))))"
	" SELECT (SELECT count(*) FROM f),"
	" coalesce((SELECT jsonb_agg(j ORDER BY" LIST_ORDER ") FROM (SELECT p.*, " DECISION_JSON " AS j"
	"  FROM (SELECT * FROM f ORDER BY" LIST_ORDER " LIMIT $8 OFFSET $9) p"
	"  JOIN decision d ON d.id = p.id JOIN machine m ON m.id = d.machine_id"
	"  JOIN test t ON t.id = d.test_id JOIN variant v ON v.id = d.variant_id"
	"  JOIN metric mt ON mt.id = d.metric_id JOIN commits c ON c.id = d.commit_id"
	"  JOIN commits b ON b.id = d.base_commit_id LEFT JOIN commits rc ON rc.id = d.recovered_by)"
	"  q), '[]')," PENDING;

/* api_list's answer with the pending counts of SQL_LIST's last columns. */
static void list_reply(struct request *rq, struct reply *rp, const char *const *filters)
{
	const char *params[10];
	char lim[24], off[24];
	long limit, offset;
	PGconn *c;
	PGresult *r;

	if (http_list_params(rq, rp, &limit, &offset))
		return;
	snprintf(lim, sizeof(lim), "%ld", limit);
	snprintf(off, sizeof(off), "%ld", offset);
	for (int i = 0; i < 7; i++)
		params[i] = filters[i];
	params[7] = lim;
	params[8] = off;
	params[9] = filters[7];
	if (!(c = db_get())) {
		reply_unavailable(rp);
		return;
	}
	r = db_exec(c, SQL_LIST, 10, params);
	if (!db_ok(r) || PQntuples(r) != 1) {
		reply_db_error(rp, c, r, "listing");
	} else {
		rp->status = 200;
		rp->content_type = "application/json";
		buf_printf(&rp->body,
			   "{\"items\":%s,\"total\":%s,\"limit\":%ld,\"offset\":%ld,"
			   "\"pending_groups\":%s,\"pending_decisions\":%s}",
			   PQgetvalue(r, 0, 1), PQgetvalue(r, 0, 0), limit, offset,
			   PQgetvalue(r, 0, 2), PQgetvalue(r, 0, 3));
	}
	PQclear(r);
}

static int in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

/*
 * The query parameter name, a comma list of words of allowed (dflt when
 * absent), as a PostgreSQL array literal into out; -1 after answering 400.
 */
static int set_param(struct request *rq, struct reply *rp, const char *name,
		     const char *const *allowed, const char *dflt, struct buf *out)
{
	const char *v = http_query(rq, name);
	char *copy = xstrdup(v && *v ? v : dflt), *save = NULL;
	int rc = 0;

	buf_putc(out, '{');
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!in_list(tok, allowed)) {
			struct buf msg = BUF_INIT;
			buf_printf(&msg, "%s must list", name);
			for (const char *const *a = allowed; *a; a++)
				buf_printf(&msg, "%s %s", a == allowed ? "" : a[1] ? "," : " or", *a);
			reply_error(rp, 400, "invalid", name, "%s", buf_str(&msg));
			buf_release(&msg);
			rc = -1;
			break;
		}
		buf_printf(out, "%s%s", out->len > 1 ? "," : "", tok);
	}
	free(copy);
	buf_putc(out, '}');
	return rc;
}

void api_regressions_list(struct request *rq, struct reply *rp)
{
	static const char *const verdicts[] = {"regression", "improvement", "changed", "noise",
					       NULL};
	static const char *const states[] = {"new", "acknowledged", "invalid", "fixed", NULL};
	static const char *const focuses[] = {"lru_lock", "mglru", NULL};
	const char *state = http_query(rq, "state");
	const char *since = http_query(rq, "since");
	static const char *const roles[] = {"kpi", "event", "info", "monitor", NULL};
	const char *focus = http_query(rq, "focus");
	struct buf vlist = BUF_INIT, rlist = BUF_INIT;
	const char *filters[8];

	if (state && !in_list(state, states)) {
		reply_error(rp, 400, "invalid", "state",
			    "state must be new, acknowledged, invalid or fixed");
		return;
	}
	if (since && iso8601_check(since)) {
		reply_error(rp, 400, "invalid", "since",
			    "since must be an ISO 8601 date-time such as 2020-06-16T10:00:00Z");
		return;
	}
	if (focus && !in_list(focus, focuses)) {
		reply_error(rp, 400, "invalid", "focus", "focus must be lru_lock or mglru");
		return;
	}
	/* verdict=a,b; by default everything but noise */
	if (set_param(rq, rp, "verdict", verdicts, "regression,improvement,changed", &vlist) ||
	    set_param(rq, rp, "role", roles, "kpi,event,info", &rlist)) {
		buf_release(&vlist);
		buf_release(&rlist);
		return;
	}
	filters[0] = buf_str(&vlist);
	filters[1] = state;
	filters[2] = since;
	filters[3] = http_query(rq, "machine");
	filters[4] = http_query(rq, "suite");
	filters[5] = http_query(rq, "series");
	filters[6] = focus;
	filters[7] = buf_str(&rlist);
	list_reply(rq, rp, filters);
	buf_release(&vlist);
	buf_release(&rlist);
}

/*
 * A side's samples (the values of its runs, in order), or null when some of
 * its runs are archived (`kperfd archive`: their values gone); and the
 * summaries of those archived runs (run, n, mean, stddev, min, max).
 */
#define SIDE_WHERE(commit)                                                                     \
	" WHERE r.commit_id = " commit " AND r.machine_id = d.machine_id"                      \
	" AND r.test_id = d.test_id AND r.variant_id = d.variant_id AND r.valid"
/* a run's summary of the decision's metric: its key group's row of its month */
#define SUMMARY_OF_RUN                                                                         \
	" ON ss.run_id = r.id AND ss.metric_id = d.metric_id"                                  \
	" AND ss.month = date_trunc('month', r.received_at AT TIME ZONE 'UTC')::date"          \
	" AND ss.key_group_id = (SELECT g.id FROM key_group g WHERE g.machine_id = d.machine_id" \
	"  AND g.test_id = d.test_id AND g.variant_id = d.variant_id)"
#define SIDE_SAMPLES(commit)                                                                   \
	"CASE WHEN EXISTS (SELECT 1 FROM run r JOIN sample_summary ss" SUMMARY_OF_RUN          \
	SIDE_WHERE(commit) ") THEN NULL"                                                       \
	" ELSE (SELECT coalesce(jsonb_agg(s.value ORDER BY r.id, s.iteration), '[]')"           \
	"  FROM run r JOIN sample s ON s.run_id = r.id AND s.at = r.received_at"                \
	"  AND s.metric_id = d.metric_id" SIDE_WHERE(commit) ") END"
#define SIDE_ARCHIVED(commit)                                                                  \
	"(SELECT coalesce(jsonb_agg(jsonb_build_object('run_id', r.run_id, 'n', ss.n,"          \
	"   'mean', ss.mean, 'stddev', CASE WHEN ss.n > 1 THEN sqrt(ss.m2 / (ss.n - 1)) END,"  \
	"   'min', ss.min, 'max', ss.max) ORDER BY r.id), '[]')"                               \
	" FROM run r JOIN sample_summary ss" SUMMARY_OF_RUN SIDE_WHERE(commit) ")"

static const char SQL_ONE[] =
	"SELECT (" DECISION_JSON " || jsonb_build_object("
	" 'base_samples', " SIDE_SAMPLES("d.base_commit_id") ","
	" 'target_samples', " SIDE_SAMPLES("d.commit_id") ","
	" 'base_archived', " SIDE_ARCHIVED("d.base_commit_id") ","
	" 'target_archived', " SIDE_ARCHIVED("d.commit_id") ","
	" 'base_runs', (SELECT coalesce(jsonb_agg(r.run_id ORDER BY r.id), '[]') FROM run r"
	"   WHERE r.commit_id = d.base_commit_id AND r.machine_id = d.machine_id"
	"   AND r.test_id = d.test_id AND r.variant_id = d.variant_id AND r.valid),"
	" 'target_runs', (SELECT coalesce(jsonb_agg(r.run_id ORDER BY r.id), '[]') FROM run r"
	"   WHERE r.commit_id = d.commit_id AND r.machine_id = d.machine_id"
	"   AND r.test_id = d.test_id AND r.variant_id = d.variant_id AND r.valid),"
	" 'history', (SELECT coalesce(jsonb_agg(jsonb_build_object('state', e.state, 'note',"
	"   e.note, 'by', e.token_name, 'at', e.at) ORDER BY e.id), '[]') FROM decision_event e"
	"   WHERE e.decision_id = d.id)))::text"
	DECISION_FROM " WHERE d.id = $1";

/* The change and its entry in the decision's history, in one statement. */
static const char SQL_TRIAGE[] =
	"WITH u AS (UPDATE decision SET state = $2, note = coalesce($3, note), updated_at = now()"
	"  WHERE id = $1 RETURNING id)"
	" INSERT INTO decision_event (decision_id, state, note, token_name)"
	" SELECT u.id, $2, $3, (SELECT name FROM api_token WHERE id = $4::bigint) FROM u";

static int decision_id(struct request *rq, struct reply *rp, char *id, size_t cap)
{
	int64_t v;
	if (parse_int64(rq->arg, 1, INT64_MAX, &v) || *rq->arg == '+') {
		reply_error(rp, 404, "not_found", "id", "no regression \"%s\"", rq->arg);
		return -1;
	}
	snprintf(id, cap, "%lld", (long long)v);
	return 0;
}

static void answer_one(struct reply *rp, PGconn *c, const char *id)
{
	const char *params[1] = {id};
	PGresult *r = db_exec(c, SQL_ONE, 1, params);

	if (!db_ok(r))
		reply_db_error(rp, c, r, "reading the regression");
	else if (PQntuples(r) == 0)
		reply_error(rp, 404, "not_found", "id", "no regression %s", id);
	else
		reply_json(rp, 200, PQgetvalue(r, 0, 0));
	PQclear(r);
}

void api_regression_get(struct request *rq, struct reply *rp)
{
	char id[32];
	PGconn *c;

	if (decision_id(rq, rp, id, sizeof(id)))
		return;
	if (!(c = db_get())) {
		reply_unavailable(rp);
		return;
	}
	answer_one(rp, c, id);
}

void api_regression_triage(struct request *rq, struct reply *rp)
{
	static const char *const states[] = {"new", "acknowledged", "invalid", "fixed", NULL};
	json_error_t err;
	json_t *body, *state, *note;
	const char *params[4];
	char id[32], token[24];
	PGconn *c;
	PGresult *r;

	if (decision_id(rq, rp, id, sizeof(id)))
		return;
	snprintf(token, sizeof(token), "%ld", rq->token_id);
	body = json_loadb(rq->body.data ? rq->body.data : "", rq->body.len,
			  JSON_REJECT_DUPLICATES, &err);
	if (!body) {
		reply_error(rp, 400, "malformed", NULL, "line %d, column %d: %s", err.line,
			    err.column, err.text);
		return;
	}
	state = json_object_get(body, "state");
	note = json_object_get(body, "note");
	if (!json_is_string(state) || !in_list(json_string_value(state), states)) {
		reply_error(rp, 400, "invalid", "state",
			    "state must be new, acknowledged, invalid or fixed");
		goto out;
	}
	if (note && (!json_is_string(note) || json_string_length(note) > LIMIT_TEXT)) {
		reply_error(rp, 400, "invalid", "note", "note must be a string of at most %d bytes",
			    LIMIT_TEXT);
		goto out;
	}
	if (!(c = db_get())) {
		reply_unavailable(rp);
		goto out;
	}
	params[0] = id;
	params[1] = json_string_value(state);
	params[2] = note ? json_string_value(note) : NULL;
	params[3] = token;
	r = db_exec(c, SQL_TRIAGE, 4, params);
	if (!db_ok(r))
		reply_db_error(rp, c, r, "triaging");
	else if (!strcmp(PQcmdTuples(r), "0"))
		reply_error(rp, 404, "not_found", "id", "no regression %s", id);
	else
		answer_one(rp, c, id);
	PQclear(r);
out:
	json_decref(body);
}

/* Invalidate, and queue the key group for a new decision (its children follow). */
static const char SQL_INVALIDATE[] =
	"WITH r AS (UPDATE run SET valid = false, invalidated_at = now()"
	"  WHERE run_id = $1 RETURNING id, commit_id, machine_id, test_id, variant_id),"
	" q AS (INSERT INTO decision_queue (commit_id, machine_id, test_id, variant_id)"
	"  SELECT commit_id, machine_id, test_id, variant_id FROM r" STORE_QUEUE_ON_CONFLICT ")"
	" SELECT id FROM r";

void api_run_invalidate(struct request *rq, struct reply *rp)
{
	const char *params[1] = {rq->arg};
	PGconn *c = db_get();
	PGresult *r;

	if (!c) {
		reply_unavailable(rp);
		return;
	}
	r = db_exec(c, SQL_INVALIDATE, 1, params);
	if (!db_ok(r)) {
		reply_db_error(rp, c, r, "invalidating the run");
	} else if (PQntuples(r) == 0) {
		reply_error(rp, 404, "not_found", "run_id", "no run \"%s\"", rq->arg);
	} else {
		rp->status = 200;
		rp->content_type = "application/json";
		buf_puts(&rp->body, "{\"run_id\":");
		jsonw_string(&rp->body, rq->arg, strlen(rq->arg));
		buf_puts(&rp->body, ",\"valid\":false}");
	}
	PQclear(r);
}
