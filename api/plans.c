/*
 * plans.c - /api/v1/plans: what the robot tests (series of an inbox, or
 * the heads of a branch), with which tests, where, and how it reports;
 * and the release of a held reply, /api/v1/alerts/ID/release.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/body.h"
#include "lib/ingest_decode.h"
#include "lib/kperf_limits.h"
#include "server/db/db.h"
#include "server/robot/plan.h"
#include "server/robot/report.h"

#define PLAN_TESTS_MAX 64
#define PLAN_GLOBS_MAX 64

/* The tests as [{suite, params}] with canonical params, or NULL answered. */
static char *plan_tests(json_t *tests, struct reply *rp)
{
	json_t *out = json_array(), *t;
	size_t i;
	char *s;

	if (!json_is_array(tests) || !json_array_size(tests) ||
	    json_array_size(tests) > PLAN_TESTS_MAX) {
		reply_error(rp, 400, "invalid", "tests",
			    "tests must be an array of 1-%d {\"suite\", \"params\"}", PLAN_TESTS_MAX);
		json_decref(out);
		return NULL;
	}
	json_array_foreach(tests, i, t) {
		struct decode_error err;
		char field[32], *params = NULL;
		snprintf(field, sizeof(field), "tests[%zu]", i);
		if (ingest_decode_test(t, field, 0, &params, NULL, &err)) {
			reply_error(rp, err.status, err.code, err.field, "%s", err.message);
			json_decref(out);
			return NULL;
		}
		json_array_append_new(out, json_pack("{s:O,s:o}", "suite", json_object_get(t, "suite"),
						     "params", json_loads(params, 0, NULL)));
		free(params);
	}
	s = json_dumps(out, JSON_COMPACT);
	json_decref(out);
	return s;
}

/* "match": {"subject": GLOB, "files": [GLOBS]}: 0, or -1 answered. */
static int plan_match(json_t *o, struct plan_in *in, char **files, struct reply *rp)
{
	static const char *const known[] = {"subject", "files", NULL};
	json_t *m = json_object_get(o, "match"), *v;
	const char *key;

	*files = NULL;
	if (m && !json_is_null(m) && !json_is_object(m)) {
		reply_error(rp, 400, "invalid", "match", "match must be an object");
		return -1;
	}
	json_object_foreach(m, key, v) {
		int ok = !strcmp(key, known[0]) || !strcmp(key, known[1]);
		if (!ok) {
			reply_error(rp, 400, "invalid", "match", "unknown key \"match.%.64s\": match takes"
				    " subject and files", key);
			return -1;
		}
	}
	if (body_string(m, "subject", LIMIT_TEXT, &in->subject, rp) < 0 ||
	    body_strings(m, "files", PLAN_GLOBS_MAX, 4096, files, rp) < 0)
		return -1;
	return 0;
}

/* "report": {"mode", "cc", "clean", "regzbot"}: 0, or -1 answered. */
static int plan_report(json_t *o, struct plan_in *in, char **cc, struct reply *rp)
{
	static const char *const known[] = {"mode", "cc", "clean", "regzbot", NULL};
	json_t *r = json_object_get(o, "report"), *v;
	const char *key;
	size_t i;

	*cc = NULL;
	in->mode = "hold";
	if (r && !json_is_null(r) && !json_is_object(r)) {
		reply_error(rp, 400, "invalid", "report", "report must be an object");
		return -1;
	}
	json_object_foreach(r, key, v) {
		int ok = 0;
		for (const char *const *k = known; *k; k++)
			ok |= !strcmp(*k, key);
		if (!ok) {
			reply_error(rp, 400, "invalid", "report", "unknown key \"report.%.64s\": report"
				    " takes mode, cc, clean and regzbot", key);
			return -1;
		}
	}
	if (body_string(r, "mode", 8, &in->mode, rp) < 0 || body_bool(r, "clean", &in->clean, rp) < 0 ||
	    body_bool(r, "regzbot", &in->regzbot, rp) < 0)
		return -1;
	if (!in->mode)
		in->mode = "hold";
	if (strcmp(in->mode, "send") && strcmp(in->mode, "hold")) {
		reply_error(rp, 400, "invalid", "report.mode", "report.mode must be send or hold");
		return -1;
	}
	v = json_object_get(r, "cc");
	json_array_foreach(v, i, o) {
		if (!json_is_string(o) || !body_email_ok(json_string_value(o))) {
			reply_error(rp, 400, "invalid", "report.cc",
				    "report.cc[%zu] must be an address like a@b.org", i);
			return -1;
		}
	}
	return body_strings(r, "cc", PLAN_GLOBS_MAX, 254, cc, rp);
}

void api_plans_post(struct request *rq, struct reply *rp)
{
	static const char *const known[] = {"name", "inbox", "branch", "match", "tests",
					    "machines", "runs", "report", NULL};
	struct plan_in in = {0};
	char *tests = NULL, *files = NULL, *machines = NULL, *cc = NULL;
	struct buf out = BUF_INIT;
	json_t *o = body_object(rq, rp, known, "a plan");
	PGconn *c;
	int rc;

	in.runs = 3;
	if (!o)
		return;
	if (body_string(o, "name", 64, &in.name, rp) < 0 ||
	    body_string(o, "inbox", 64, &in.inbox, rp) < 0 ||
	    body_string(o, "branch", 256, &in.branch, rp) < 0 ||
	    body_long(o, "runs", 1, 100, &in.runs, rp) < 0 ||
	    body_strings(o, "machines", PLAN_GLOBS_MAX, LIMIT_MACHINE_NAME, &machines, rp) < 0 ||
	    plan_match(o, &in, &files, rp) < 0 || plan_report(o, &in, &cc, rp) < 0)
		goto out;
	if (!in.name || strspn(in.name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					"0123456789._-") != strlen(in.name)) {
		reply_error(rp, 400, "invalid", "name", "name must be 1-64 of A-Za-z0-9._-");
		goto out;
	}
	if (!in.inbox == !in.branch) {
		reply_error(rp, 400, "invalid", in.inbox ? "branch" : "inbox",
			    "a plan takes either an inbox or a branch");
		goto out;
	}
	if (!(tests = plan_tests(json_object_get(o, "tests"), rp)))
		goto out;
	in.tests = tests;
	in.files = files;
	in.cc = cc;
	in.machines = strcmp(machines, "{}") ? machines : "{*}";
	if (!(c = db_get())) {
		reply_unavailable(rp);
		goto out;
	}
	rc = plan_add(c, &in, &out);
	if (rc < 0)
		reply_db_status(rp, 503, "adding the plan");
	else if (rc == 1)
		reply_error(rp, 409, "conflict", "name", "a plan named \"%s\" exists", in.name);
	else if (rc == 2)
		reply_error(rp, 400, "invalid", "inbox", "no inbox is named \"%s\"", in.inbox);
	else
		reply_json(rp, 201, out.data);
out:
	free(tests);
	free(files);
	free(machines);
	free(cc);
	buf_release(&out);
	json_decref(o);
}

void api_plans_list(struct request *rq, struct reply *rp)
{
	(void)rq;
	body_reply_list(rp, plan_list_json, "listing plans");
}

void api_alert_action(struct request *rq, struct reply *rp)
{
	const char *slash = strchr(rq->arg, '/');
	char id[32];
	PGconn *c;
	int rc;

	if (!slash || strcmp(slash, "/release") || slash == rq->arg ||
	    (size_t)(slash - rq->arg) >= 20 ||
	    strspn(rq->arg, "0123456789") != (size_t)(slash - rq->arg)) {
		reply_error(rp, 404, "not_found", NULL, "no such resource: %s", rq->path);
		return;
	}
	snprintf(id, sizeof(id), "%.*s", (int)(slash - rq->arg), rq->arg);
	if (!(c = db_get())) {
		reply_unavailable(rp);
		return;
	}
	rc = report_release(c, id);
	if (rc < 0)
		reply_db_status(rp, 503, "releasing the reply");
	else if (rc == 1)
		reply_error(rp, 409, "conflict", "id", "alert %s is no held reply", id);
	else
		reply_json(rp, 200, "{\"released\":true}");
}
