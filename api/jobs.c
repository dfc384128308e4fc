/*
 * jobs.c - /api/v1/jobs: work for the labs. An admin (or a policy: the
 * confirmation of a decision, a bisection) queues a job of N runs of one
 * test and variant on one commit; lab agents claim jobs for the tests of
 * their own catalogue (a long poll), keep the lease with heartbeats, post
 * runs naming the job and fail or give back what they cannot run. kperfd
 * never sends a command: a job only names a test.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/buf.h"
#include "server/db/db.h"
#include "lib/kperf_limits.h"
#include "server/db/token.h"
#include "lib/util.h"
#include "api/api.h"
#include "lib/ingest_decode.h"
#include "api/jobs.h"
#include "api/ref.h"

#define JOB_FAILURES_MAX 3   /* failures that end a job */
#define JOB_LEASE_DEFAULT_S 1800
#define JOB_CLAIM_TESTS_MAX 256
#define JOB_CLAIM_POLL_US 200000

#define JOB_FROM                                                                                \
	" FROM job j JOIN commits c ON c.id = j.commit_id LEFT JOIN machine m ON m.id = j.machine_id" \
	" JOIN test t ON t.id = j.test_id JOIN variant v ON v.id = j.variant_id"                   \
	" LEFT JOIN machine lm ON lm.id = j.leased_to"

#define JOB_JSON                                                                                  \
	"jsonb_build_object('id', j.id, 'commit', c.sha, 'release', c.release,"                    \
	" 'subject', c.subject, 'machine', m.name, 'suite', t.suite, 'params', t.params,"          \
	" 'variant', v.knobs, 'runs', j.runs, 'runs_done', j.runs_done, 'priority', j.priority,"   \
	" 'reason', j.reason, 'state', j.state, 'leased_to', lm.name, 'lease_s', j.lease_s,"       \
	" 'lease_until', j.lease_until, 'attempts', j.attempts, 'failures', j.failures,"           \
	" 'bisection', j.bisection_id, 'decision', j.decision_id, 'created_at', j.created_at,"    \
	" 'claimed_at', j.claimed_at, 'ended_at', j.ended_at)"

static const char SQL_ONE[] = "SELECT " JOB_JSON "::text" JOB_FROM " WHERE j.id = $1::bigint";

static json_t *load_body(struct request *rq, struct reply *rp, int required)
{
	json_error_t err;
	json_t *body;

	if (!rq->body.len && !required)
		return json_object();
	body = json_loadb(rq->body.data ? rq->body.data : "", rq->body.len,
			  JSON_REJECT_DUPLICATES, &err);
	if (!body) {
		reply_error(rp, 400, "malformed", NULL, "line %d, column %d: %s", err.line,
			    err.column, err.text);
		return NULL;
	}
	if (!json_is_object(body)) {
		reply_error(rp, 400, "invalid", NULL, "the body must be a JSON object");
		json_decref(body);
		return NULL;
	}
	return body;
}

/* An optional integer member in [min, max]: 0 (absent: *out untouched), or -1 answered. */
static int opt_int(json_t *body, const char *key, long min, long max, long *out,
		   struct reply *rp)
{
	json_t *v = json_object_get(body, key);
	double d;

	if (!v || json_is_null(v))
		return 0;
	d = json_is_number(v) ? json_number_value(v) : -1e300;
	if (!json_is_number(v) || d != (double)(long)d || d < (double)min || d > (double)max) {
		reply_error(rp, 400, "invalid", key, "%s must be an integer from %ld to %ld", key,
			    min, max);
		return -1;
	}
	*out = (long)d;
	return 0;
}

/* An optional string member of at most max bytes: 0, or -1 answered. */
static int opt_text(json_t *body, const char *key, size_t max, const char **out,
		    struct reply *rp)
{
	json_t *v = json_object_get(body, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v) || json_string_length(v) > max) {
		reply_error(rp, 400, "invalid", key, "%s must be a string of at most %zu bytes",
			    key, max);
		return -1;
	}
	*out = json_string_value(v);
	return 0;
}

/* A machine name as runs spell it (1-64 of A-Za-z0-9._-). */
static int machine_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	return n >= 1 && n <= LIMIT_MACHINE_NAME &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

static int job_id(struct request *rq, struct reply *rp, char *out, size_t cap)
{
	int64_t id;
	char tmp[32];
	const char *slash = strchr(rq->arg, '/');
	size_t n = slash ? (size_t)(slash - rq->arg) : strlen(rq->arg);

	snprintf(tmp, sizeof(tmp), "%.*s", (int)(n < sizeof(tmp) ? n : sizeof(tmp) - 1), rq->arg);
	if (n >= sizeof(tmp) || parse_int64(tmp, 1, INT64_MAX, &id)) {
		reply_error(rp, 404, "not_found", "id", "no job \"%.*s\"", (int)n, rq->arg);
		return -1;
	}
	snprintf(out, cap, "%lld", (long long)id);
	return 0;
}

static void answer_job(struct reply *rp, PGconn *c, const char *id, int status)
{
	const char *params[1] = {id};
	PGresult *r = db_exec(c, SQL_ONE, 1, params);

	if (!db_ok(r))
		reply_db_error(rp, c, r, "reading the job");
	else if (PQntuples(r) == 0)
		reply_error(rp, 404, "not_found", "id", "no job %s", id);
	else
		reply_json(rp, status, PQgetvalue(r, 0, 0));
	PQclear(r);
}

static const char SQL_CREATE[] =
	"WITH t AS (INSERT INTO test (suite, params) VALUES ($3, $4::jsonb)"
	"  ON CONFLICT (suite, params) DO UPDATE SET suite = EXCLUDED.suite RETURNING id),"
	" v AS (INSERT INTO variant (knobs) VALUES ($5::jsonb)"
	"  ON CONFLICT (knobs) DO UPDATE SET knobs = EXCLUDED.knobs RETURNING id)"
	" SELECT kperf_job_add($1::bigint, $2::bigint, t.id, v.id, $6::int, 'asked', $8,"
	"  $7::int, $9::int) FROM t, v";

void api_jobs_post(struct request *rq, struct reply *rp)
{
	json_t *body = load_body(rq, rp, 1);
	struct decode_error derr;
	struct ref ref = {0};
	char *params = NULL, *variant = NULL, commit_id[32], machine_id[32], runs_s[16], prio_s[16],
	     lease_s[16];
	const char *commit_text, *machine = NULL, *reason = NULL, *p[9];
	long runs = 1, priority = 0, lease = JOB_LEASE_DEFAULT_S;
	PGconn *c;
	PGresult *r;

	if (!body)
		return;
	if (opt_text(body, "commit", 256, &commit_text, rp) ||
	    opt_text(body, "machine", LIMIT_MACHINE_NAME, &machine, rp) ||
	    opt_text(body, "reason", LIMIT_TEXT, &reason, rp) ||
	    opt_int(body, "runs", 1, 100, &runs, rp) ||
	    opt_int(body, "priority", -1000000, 1000000, &priority, rp) ||
	    opt_int(body, "lease_s", 2, 86400, &lease, rp))
		goto out;
	if (!commit_text) {
		reply_error(rp, 400, "invalid", "commit", "commit is required: a sha, release or series");
		goto out;
	}
	if (machine && !machine_name_ok(machine)) {
		reply_error(rp, 400, "invalid", "machine", "machine must be 1-%d of A-Za-z0-9._-",
			    LIMIT_MACHINE_NAME);
		goto out;
	}
	if (ingest_decode_test(body, NULL, 1, &params, &variant, &derr)) {
		reply_error(rp, derr.status, derr.code, derr.field, "%s", derr.message);
		goto out;
	}
	if (ref_parse(commit_text, &ref, rp, "commit"))
		goto out;
	if (!(c = db_get())) {
		reply_unavailable(rp);
		goto out;
	}
	if (ref_resolve(c, &ref, rp, "commit"))
		goto out;
	/* "{3}" or "{3,7}": the first (a series' last patch) */
	snprintf(commit_id, sizeof(commit_id), "%.*s", (int)strcspn(ref.commit_ids + 1, ",}"),
		 ref.commit_ids + 1);
	machine_id[0] = '\0';
	if (machine) {
		const char *pm[1] = {machine};
		r = db_exec(c, "SELECT id FROM machine WHERE name = $1", 1, pm);
		if (!db_ok(r)) {
			reply_db_error(rp, c, r, "reading the machine");
			PQclear(r);
			goto out;
		}
		if (PQntuples(r) == 0) {
			reply_error(rp, 404, "not_found", "machine",
				    "no machine \"%s\" (one appears when it posts a run or claims a job)",
				    machine);
			PQclear(r);
			goto out;
		}
		snprintf(machine_id, sizeof(machine_id), "%s", PQgetvalue(r, 0, 0));
		PQclear(r);
	}
	snprintf(runs_s, sizeof(runs_s), "%ld", runs);
	snprintf(prio_s, sizeof(prio_s), "%ld", priority);
	snprintf(lease_s, sizeof(lease_s), "%ld", lease);
	p[0] = commit_id;
	p[1] = machine ? machine_id : NULL;
	p[2] = json_string_value(json_object_get(body, "suite"));
	p[3] = params;
	p[4] = variant;
	p[5] = runs_s;
	p[6] = prio_s;
	p[7] = reason;
	p[8] = lease_s;
	r = db_exec(c, SQL_CREATE, 9, p);
	if (!db_ok(r))
		reply_db_error(rp, c, r, "queueing the job");
	else
		answer_job(rp, c, PQgetvalue(r, 0, 0), 201);
	PQclear(r);
out:
	ref_release(&ref);
	free(params);
	free(variant);
	json_decref(body);
}

/* Leases that ran out: the job goes back to the queue (no attempt counted). */
static const char SQL_REQUEUE[] =
	"UPDATE job SET state = 'queued', leased_to = NULL, lease_until = NULL"
	" WHERE state = 'running' AND lease_until < now()";

/*
 * The next job for machine $1 among the tests it offers ($2: [{suite,
 * params}]): jobs on the kernel it runs ($3 sha, else $4 release) first, then
 * by priority, then the oldest.
 */
static const char SQL_CLAIM[] =
	"WITH m AS (SELECT id FROM machine WHERE name = $1),"
	" offer AS (SELECT t.id FROM test t, jsonb_to_recordset($2::jsonb) AS o(suite text, params jsonb)"
	"  WHERE t.suite = o.suite AND t.params = o.params),"
	" pick AS (SELECT j.id FROM job j JOIN commits c ON c.id = j.commit_id, m"
	"  WHERE j.state = 'queued' AND (j.machine_id IS NULL OR j.machine_id = m.id)"
	"  AND j.test_id IN (SELECT id FROM offer)"
	/* $5 false: an agent that cannot switch kernels takes jobs on its own only */
	"  AND ($5::boolean OR coalesce(c.sha = $3 OR ($3::text IS NULL AND c.release = $4), false))"
	/* $6 false: an agent without a git tree takes no job whose kernel is a series */
	"  AND ($6::boolean OR kperf_job_series(j.series_id, j.apply_patches, j.commit_id) IS NULL)"
	"  ORDER BY coalesce(c.sha = $3 OR ($3::text IS NULL AND c.release = $4), false) DESC,"
	"  j.priority DESC, j.id LIMIT 1 FOR UPDATE OF j SKIP LOCKED)"
	" UPDATE job j SET state = 'running', leased_to = m.id, claimed_at = now(),"
	"  lease_until = now() + make_interval(secs => j.lease_s)"
	" FROM pick, m WHERE j.id = pick.id"
	" RETURNING jsonb_build_object('job', jsonb_build_object('id', j.id,"
	"  'commit', CASE WHEN j.series_id IS NULL THEN (SELECT sha FROM commits WHERE id = j.commit_id)"
	"   ELSE (SELECT c2.sha FROM posted_patch pp JOIN commits c2 ON c2.id = pp.commit_id"
	"    WHERE pp.series_id = j.series_id AND pp.position = j.apply_patches) END,"
	"  'release', (SELECT release FROM commits WHERE id = j.commit_id AND j.series_id IS NULL),"
	"  'series', kperf_job_series(j.series_id, j.apply_patches, j.commit_id),"
	"  'subject', (SELECT subject FROM commits WHERE id = j.commit_id),"
	"  'suite', (SELECT suite FROM test WHERE id = j.test_id),"
	"  'params', (SELECT params FROM test WHERE id = j.test_id),"
	"  'variant', (SELECT knobs FROM variant WHERE id = j.variant_id),"
	"  'runs', j.runs - j.runs_done, 'runs_done', j.runs_done, 'lease_s', j.lease_s,"
	"  'reason', j.reason))::text";

/* The claiming machine exists from its first claim, and so do the tests it
 * offers (a test is its suite and params); what it offers is what its last
 * claim listed (an agent restarted with a smaller catalogue offers less). */
static const char SQL_TESTS[] =
	"INSERT INTO test (suite, params) SELECT o.suite, o.params"
	" FROM jsonb_to_recordset($1::jsonb) AS o(suite text, params jsonb)"
	" ON CONFLICT (suite, params) DO NOTHING";
static const char SQL_OFFER[] =
	"WITH m AS (INSERT INTO machine (name) VALUES ($1)"
	"  ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name RETURNING id),"
	" o AS (SELECT t.id FROM test t, jsonb_to_recordset($2::jsonb) AS o(suite text, params jsonb)"
	"  WHERE t.suite = o.suite AND t.params = o.params),"
	" gone AS (DELETE FROM machine_offer x USING m WHERE x.machine_id = m.id"
	"  AND x.test_id NOT IN (SELECT id FROM o))"
	" INSERT INTO machine_offer (machine_id, test_id) SELECT m.id, o.id FROM m, o"
	" ON CONFLICT (machine_id, test_id) DO UPDATE SET last_claim_at = now()";

/* The claim's tests as [{suite, params}] with canonical params, or NULL answered. */
static char *claim_tests(json_t *tests, struct reply *rp)
{
	json_t *out = json_array(), *t;
	size_t i;
	char *s;

	if (!json_is_array(tests) || json_array_size(tests) > JOB_CLAIM_TESTS_MAX) {
		reply_error(rp, 400, "invalid", "tests",
			    "tests must be an array of at most %d {\"suite\", \"params\"}",
			    JOB_CLAIM_TESTS_MAX);
		json_decref(out);
		return NULL;
	}
	json_array_foreach(tests, i, t) {
		struct decode_error err;
		char field[32], *params = NULL;
		json_t *params_json;
		snprintf(field, sizeof(field), "tests[%zu]", i);
		if (ingest_decode_test(t, field, 0, &params, NULL, &err)) {
			reply_error(rp, err.status, err.code, err.field, "%s", err.message);
			json_decref(out);
			return NULL;
		}
		params_json = json_loads(params, 0, NULL);
		free(params);
		json_array_append_new(out, json_pack("{s:O,s:o}", "suite", json_object_get(t, "suite"),
						     "params", params_json));
	}
	s = json_dumps(out, JSON_COMPACT);
	json_decref(out);
	return s;
}

void api_jobs_claim(struct request *rq, struct reply *rp)
{
	json_t *body = load_body(rq, rp, 1), *running;
	const char *machine, *sha = NULL, *release = NULL;
	char *tests = NULL;
	long wait_s = 0;
	int64_t deadline;
	int can_switch = 1, has_tree = 0;

	if (!body)
		return;
	if (opt_text(body, "machine", LIMIT_MACHINE_NAME, &machine, rp) ||
	    opt_int(body, "wait_s", 0, 60, &wait_s, rp))
		goto out;
	if (!machine || !machine_name_ok(machine)) {
		reply_error(rp, 400, "invalid", "machine", "machine must be 1-%d of A-Za-z0-9._-",
			    LIMIT_MACHINE_NAME);
		goto out;
	}
	if (!token_allows_machine(rq->machines, machine)) {
		reply_error(rp, 403, "forbidden", "machine",
			    "this token may not claim jobs for machine \"%s\"", machine);
		goto out;
	}
	{
		json_t *sw = json_object_get(body, "switch");
		if (sw && !json_is_boolean(sw)) {
			reply_error(rp, 400, "invalid", "switch",
				    "switch must be true (the agent can boot another kernel) or false");
			goto out;
		}
		can_switch = !sw || json_is_true(sw);
		sw = json_object_get(body, "tree");
		if (sw && !json_is_boolean(sw)) {
			reply_error(rp, 400, "invalid", "tree",
				    "tree must be true (the agent applies series in a git tree) or false");
			goto out;
		}
		has_tree = json_is_true(sw);
	}
	running = json_object_get(body, "running");
	if (running && !json_is_null(running)) {
		json_t *cs = json_object_get(running, "commit"), *rl = json_object_get(running, "release");
		if (!json_is_object(running) || (cs && !json_is_null(cs) && !json_is_string(cs)) ||
		    (rl && !json_is_null(rl) &&
		     (!json_is_string(rl) || json_string_length(rl) > 128))) {
			reply_error(rp, 400, "invalid", "running",
				    "running must be {\"commit\": sha or null, \"release\": text}");
			goto out;
		}
		sha = json_string_value(cs);
		release = json_string_value(rl);
		if (sha && (strlen(sha) != 40 || strspn(sha, "0123456789abcdef") != 40)) {
			reply_error(rp, 400, "invalid", "running.commit",
				    "running.commit must be a full sha of 40 hex digits");
			goto out;
		}
	}
	{
		json_t *given = json_object_get(body, "tests"), *none = json_array();
		tests = claim_tests(given ? given : none, rp);
		json_decref(none);
		if (!tests)
			goto out;
	}
	deadline = now_us() + wait_s * INT64_C(1000000);
	for (int first = 1;; first = 0) {
		const char *po[2] = {machine, tests};
		const char *pc[6] = {machine, tests, sha, release, can_switch ? "true" : "false",
				     has_tree ? "true" : "false"};
		PGconn *c = db_get();
		PGresult *r;

		if (!c) {
			reply_unavailable(rp);
			goto out;
		}
		if (first && (db_do(c, SQL_TESTS, 1, po + 1) || db_do(c, SQL_OFFER, 2, po))) {
			reply_db_status(rp, 503, "recording the machine's tests");
			goto out;
		}
		PQclear(db_exec(c, SQL_REQUEUE, 0, NULL));
		r = db_exec(c, SQL_CLAIM, 6, pc);
		if (!db_ok(r)) {
			reply_db_error(rp, c, r, "claiming a job");
			PQclear(r);
			goto out;
		}
		if (PQntuples(r) == 1) {
			reply_json(rp, 200, PQgetvalue(r, 0, 0));
			PQclear(r);
			goto out;
		}
		PQclear(r);
		db_release(); /* not held while waiting */
		if (http_client_gone(rq)) { /* nobody to give a job to */
			rp->status = 204;
			goto out;
		}
		if (now_us() >= deadline) {
			rp->status = 204;
			goto out;
		}
		usleep(JOB_CLAIM_POLL_US);
	}
out:
	free(tests);
	json_decref(body);
}

/*
 * The lease's holder acts on it: heartbeat, fail, release. The job must be
 * running, its lease not run out, and held by a machine the token may speak
 * for (and by "machine" when the body names one). Answers 404, 403 or 409;
 * 0 when the caller may go on.
 */
static int lease_check(PGconn *c, struct request *rq, struct reply *rp, const char *id,
		       const char *machine)
{
	const char *p[1] = {id};
	PGresult *r = db_exec(c,
			      "SELECT j.state, lm.name, j.lease_until >= now() FROM job j"
			      " LEFT JOIN machine lm ON lm.id = j.leased_to WHERE j.id = $1::bigint",
			      1, p);
	int rc = -1;

	if (!db_ok(r))
		reply_db_error(rp, c, r, "reading the job");
	else if (PQntuples(r) == 0)
		reply_error(rp, 404, "not_found", "id", "no job %s", id);
	else if (strcmp(PQgetvalue(r, 0, 0), "running") || strcmp(PQgetvalue(r, 0, 2), "t") ||
		 (machine && strcmp(machine, PQgetvalue(r, 0, 1))))
		reply_error(rp, 409, "conflict", "id",
			    "job %s is not leased%s%s (it is %s): the lease was lost", id,
			    machine ? " to " : "", machine ? machine : "", PQgetvalue(r, 0, 0));
	else if (!token_allows_machine(rq->machines, PQgetvalue(r, 0, 1)))
		reply_error(rp, 403, "forbidden", "id",
			    "this token may not act for machine \"%s\"", PQgetvalue(r, 0, 1));
	else
		rc = 0;
	PQclear(r);
	return rc;
}

/* POST /api/v1/jobs/{id}/heartbeat | fail | release */
void api_job_action(struct request *rq, struct reply *rp)
{
	const char *action = strchr(rq->arg, '/');
	json_t *body = NULL;
	const char *machine = NULL, *reason = NULL;
	char id[32];
	PGconn *c;
	PGresult *r = NULL;

	if (job_id(rq, rp, id, sizeof(id)))
		return;
	action = action ? action + 1 : "";
	if (strcmp(action, "heartbeat") && strcmp(action, "fail") && strcmp(action, "release") &&
	    strcmp(action, "applied")) {
		reply_error(rp, 404, "not_found", NULL, "no such resource: %s", rq->path);
		return;
	}
	if (!(body = load_body(rq, rp, 0)))
		return;
	if (opt_text(body, "machine", LIMIT_MACHINE_NAME, &machine, rp) ||
	    opt_text(body, "reason", LIMIT_TEXT, &reason, rp))
		goto out;
	if (!strcmp(action, "fail") && (!reason || !*reason)) {
		reply_error(rp, 400, "invalid", "reason", "a failure needs a reason");
		goto out;
	}
	if (!(c = db_get())) {
		reply_unavailable(rp);
		goto out;
	}
	if (lease_check(c, rq, rp, id, machine))
		goto out;
	if (!strcmp(action, "applied")) {
		jobs_applied(c, rp, id, body);
		goto out;
	}
	if (!strcmp(action, "heartbeat")) {
		const char *p[1] = {id};
		r = db_exec(c,
			    "UPDATE job SET lease_until = now() + make_interval(secs => lease_s)"
			    " WHERE id = $1::bigint AND state = 'running' AND lease_until >= now()",
			    1, p);
	} else if (!strcmp(action, "fail")) {
		char max[8];
		const char *p[3] = {id, reason, max};
		json_t *final = json_object_get(body, "final");
		if (final && !json_is_boolean(final)) {
			reply_error(rp, 400, "invalid", "final",
				    "final must be true (no machine can do the job) or false");
			goto out;
		}
		/* a job that cannot succeed anywhere (a series that does not apply) ends now */
		snprintf(max, sizeof(max), "%d", json_is_true(final) ? 1 : JOB_FAILURES_MAX);
		r = db_exec(c,
			    "UPDATE job j SET attempts = j.attempts + 1,"
			    " failures = j.failures || jsonb_build_array(jsonb_build_object("
			    "  'at', now(), 'machine', (SELECT name FROM machine WHERE id = j.leased_to),"
			    "  'reason', $2::text)),"
			    " state = CASE WHEN j.attempts + 1 >= $3::int THEN 'failed' ELSE 'queued' END,"
			    " ended_at = CASE WHEN j.attempts + 1 >= $3::int THEN now() END,"
			    " leased_to = NULL, lease_until = NULL"
			    " WHERE j.id = $1::bigint AND j.state = 'running'",
			    3, p);
	} else {
		const char *p[1] = {id};
		r = db_exec(c,
			    "UPDATE job SET state = 'queued', leased_to = NULL, lease_until = NULL"
			    " WHERE id = $1::bigint AND state = 'running'",
			    1, p);
	}
	if (!db_ok(r))
		reply_db_error(rp, c, r, "updating the job");
	else if (!strcmp(PQcmdTuples(r), "0"))
		reply_error(rp, 409, "conflict", "id", "job %s: the lease was lost", id);
	else if (!strcmp(action, "fail") && jobs_failed_series(c, id, reason))
		reply_db_status(rp, 503, "marking the series");
	else
		answer_job(rp, c, id, 200);
out:
	PQclear(r);
	json_decref(body);
}

void api_job_get(struct request *rq, struct reply *rp)
{
	char id[32];
	PGconn *c;

	if (job_id(rq, rp, id, sizeof(id)))
		return;
	if (!(c = db_get())) {
		reply_unavailable(rp);
		return;
	}
	answer_job(rp, c, id, 200);
}

void api_job_cancel(struct request *rq, struct reply *rp)
{
	char id[32];
	const char *p[1] = {id};
	PGconn *c;
	PGresult *r;

	if (job_id(rq, rp, id, sizeof(id)))
		return;
	if (!(c = db_get())) {
		reply_unavailable(rp);
		return;
	}
	r = db_exec(c,
		    "UPDATE job SET state = 'cancelled', ended_at = now(), leased_to = NULL,"
		    " lease_until = NULL WHERE id = $1::bigint AND state IN ('queued', 'running')"
		    " RETURNING id",
		    1, p);
	if (!db_ok(r)) {
		reply_db_error(rp, c, r, "cancelling the job");
	} else if (PQntuples(r) == 0) {
		PGresult *e = db_exec(c, "SELECT state FROM job WHERE id = $1::bigint", 1, p);
		if (db_ok(e) && PQntuples(e) == 1)
			reply_error(rp, 409, "conflict", "id", "job %s is %s already", id,
				    PQgetvalue(e, 0, 0));
		else
			reply_error(rp, 404, "not_found", "id", "no job %s", id);
		PQclear(e);
	} else {
		answer_job(rp, c, id, 200);
	}
	PQclear(r);
}

static const char SQL_LIST[] =
	"WITH f AS (SELECT j.id, " JOB_JSON " AS x" JOB_FROM
	" WHERE ($1::text IS NULL OR j.state = $1)"
	"  AND ($2::text IS NULL OR m.name = $2 OR lm.name = $2)"
	"  AND ($3::text IS NULL OR starts_with(c.sha, lower($3)) OR c.release = $3))"
	" SELECT (SELECT count(*) FROM f), coalesce((SELECT jsonb_agg(x ORDER BY id DESC)"
	"  FROM (SELECT * FROM f ORDER BY id DESC LIMIT $4 OFFSET $5) p), '[]')";

void api_jobs_list(struct request *rq, struct reply *rp)
{
	static const char *const states[] = {"queued", "running", "done", "failed", "cancelled"};
	const char *filters[3] = {http_query(rq, "state"), http_query(rq, "machine"),
				  http_query(rq, "commit")};

	if (filters[0]) {
		size_t i;
		for (i = 0; i < sizeof(states) / sizeof(*states); i++)
			if (!strcmp(filters[0], states[i]))
				break;
		if (i == sizeof(states) / sizeof(*states)) {
			reply_error(rp, 400, "invalid", "state",
				    "state must be queued, running, done, failed or cancelled");
			return;
		}
	}
	api_list(rq, rp, SQL_LIST, 3, filters);
}

/* The machines that claimed jobs: the tests they offer, when they last claimed. */
static const char SQL_AGENTS[] =
	"WITH f AS (SELECT m.id, jsonb_build_object('machine', m.name,"
	"  'last_claim_at', max(o.last_claim_at),"
	"  'tests', jsonb_agg(jsonb_build_object('suite', t.suite, 'params', t.params)"
	"   ORDER BY t.suite, t.params::text)) AS x"
	" FROM machine_offer o JOIN machine m ON m.id = o.machine_id JOIN test t ON t.id = o.test_id"
	" GROUP BY m.id, m.name)"
	" SELECT (SELECT count(*) FROM f), coalesce((SELECT jsonb_agg(x ORDER BY x->>'machine')"
	"  FROM (SELECT * FROM f ORDER BY x->>'machine' LIMIT $1 OFFSET $2) p), '[]')";

void api_jobs_agents(struct request *rq, struct reply *rp)
{
	api_list(rq, rp, SQL_AGENTS, 0, NULL);
}

/* Count a run toward its job: see jobs.h. A run counts when its variant's
 * knobs include the job's (a job queued by hand names only the knobs it
 * cares about; the machine's own, thp or swap, come with every run). */
static const char SQL_COUNT[] =
	"WITH j AS (SELECT job.id FROM job JOIN variant jv ON jv.id = job.variant_id"
	"  WHERE job.id = $1::bigint AND job.state = 'running' AND job.leased_to = $2::bigint"
	"  AND job.commit_id = $3::bigint AND job.test_id = $4::bigint"
	/* the run's knobs hold the job's: a job names the knobs it cares about */
	"  AND (SELECT knobs FROM variant WHERE id = $5::bigint) @> jv.knobs"
	"  FOR UPDATE OF job),"
	" ins AS (INSERT INTO job_run (job_id, run_id) SELECT id, $6::bigint FROM j"
	"  ON CONFLICT DO NOTHING RETURNING job_id)"
	" UPDATE job SET runs_done = runs_done + (SELECT count(*) FROM ins),"
	"  state = CASE WHEN runs_done + (SELECT count(*) FROM ins) >= runs THEN 'done'"
	"   ELSE state END,"
	"  ended_at = CASE WHEN runs_done + (SELECT count(*) FROM ins) >= runs THEN now() END"
	" WHERE id = (SELECT id FROM j)";

int jobs_count_runs(PGconn *c, const struct store_item *items, size_t n)
{
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		char job[24], mach[24], commit[24], test[24], variant[24], run[24];
		const char *p[6] = {job, mach, commit, test, variant, run};
		if (!items[i].run->job_id)
			continue;
		snprintf(job, sizeof(job), "%ld", items[i].run->job_id);
		snprintf(mach, sizeof(mach), "%ld", items[i].machine);
		snprintf(commit, sizeof(commit), "%ld", items[i].commit);
		snprintf(test, sizeof(test), "%ld", items[i].test);
		snprintf(variant, sizeof(variant), "%ld", items[i].variant);
		snprintf(run, sizeof(run), "%ld", items[i].id);
		if (db_do(c, SQL_COUNT, 6, p))
			rc = -1;
	}
	return rc;
}
