/*
 * bisections.c - /api/v1/bisections: the bisections kperf runs to pin a
 * regression on its first bad commit (server/decide/bisect.c), with their steps;
 * an admin starts one by hand between a good and a bad commit.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/decide/bisect.h"
#include "server/db/db.h"
#include "lib/kperf_limits.h"
#include "lib/util.h"
#include "api/api.h"
#include "lib/ingest_decode.h"
#include "api/ref.h"

#define BISECTION_JSON                                                                            \
	"jsonb_build_object('id', b.id, 'decision_id', b.decision_id, 'machine', m.name,"          \
	" 'suite', t.suite, 'params', t.params, 'variant', v.knobs, 'metric', mt.name,"             \
	" 'good', g.sha, 'bad', bd.sha, 'state', b.state, 'reason', b.reason,"                      \
	" 'first_bad', fb.sha, 'first_bad_subject', fb.subject, 'last_good', lg.sha,"               \
	" 'commits', cardinality(b.chain),"                                                          \
	" 'steps', coalesce((SELECT jsonb_agg(jsonb_build_object('commit', sc.sha,"                 \
	"   'subject', sc.subject, 'runs', st.runs, 'change_pct_vs_good', st.change_pct_vs_good,"  \
	"   'verdict_vs_good', st.verdict_vs_good, 'verdict_vs_bad', st.verdict_vs_bad,"           \
	"   'class', st.class, 'job_id', st.job_id,"                                               \
	"   'position', array_position(b.chain, st.commit_id) - 1) ORDER BY st.judged_at, sc.id)"   \
	"   FROM bisection_step st JOIN commits sc ON sc.id = st.commit_id"                          \
	"   WHERE st.bisection_id = b.id), '[]'),"                                                   \
	" 'started_at', b.started_at, 'ended_at', b.ended_at)"

#define BISECTION_FROM                                                                            \
	" FROM bisection b JOIN machine m ON m.id = b.machine_id JOIN test t ON t.id = b.test_id"  \
	" JOIN variant v ON v.id = b.variant_id JOIN metric mt ON mt.id = b.metric_id"              \
	" JOIN commits g ON g.id = b.good_commit_id JOIN commits bd ON bd.id = b.bad_commit_id"     \
	" LEFT JOIN commits fb ON fb.id = b.first_bad_commit_id"                                     \
	" LEFT JOIN commits lg ON lg.id = b.last_good_commit_id"

static const char SQL_ONE[] =
	"SELECT " BISECTION_JSON "::text" BISECTION_FROM " WHERE b.id = $1::bigint";

static const char SQL_LIST[] =
	"WITH f AS (SELECT b.id, " BISECTION_JSON " AS x" BISECTION_FROM
	" WHERE ($1::text IS NULL OR b.state = $1) AND ($2::text IS NULL OR m.name = $2))"
	" SELECT (SELECT count(*) FROM f), coalesce((SELECT jsonb_agg(x ORDER BY id DESC)"
	"  FROM (SELECT * FROM f ORDER BY id DESC LIMIT $3 OFFSET $4) p), '[]')";

static void answer(struct reply *rp, PGconn *c, const char *id, int status)
{
	const char *p[1] = {id};
	PGresult *r = db_exec(c, SQL_ONE, 1, p);

	if (!db_ok(r))
		reply_db_error(rp, c, r, "reading the bisection");
	else if (PQntuples(r) == 0)
		reply_error(rp, 404, "not_found", "id", "no bisection %s", id);
	else
		reply_json(rp, status, PQgetvalue(r, 0, 0));
	PQclear(r);
}

void api_bisections_list(struct request *rq, struct reply *rp)
{
	const char *filters[2] = {http_query(rq, "state"), http_query(rq, "machine")};

	if (filters[0] && strcmp(filters[0], "running") && strcmp(filters[0], "found") &&
	    strcmp(filters[0], "inconclusive")) {
		reply_error(rp, 400, "invalid", "state", "state must be running, found or inconclusive");
		return;
	}
	api_list(rq, rp, SQL_LIST, 2, filters);
}

void api_bisection_get(struct request *rq, struct reply *rp)
{
	int64_t id;
	char ids[24];
	PGconn *c;

	if (parse_int64(rq->arg, 1, INT64_MAX, &id)) {
		reply_error(rp, 404, "not_found", "id", "no bisection \"%s\"", rq->arg);
		return;
	}
	snprintf(ids, sizeof(ids), "%lld", (long long)id);
	if (!(c = db_get())) {
		reply_unavailable(rp);
		return;
	}
	answer(rp, c, ids, 200);
}

/* One commit id of a REF in out; -1 answered. */
static int one_commit(PGconn *c, json_t *body, const char *field, char *out, size_t cap,
		      struct reply *rp)
{
	json_t *v = json_object_get(body, field);
	struct ref ref = {0};
	int rc = -1;

	if (!json_is_string(v)) {
		reply_error(rp, 400, "invalid", field, "%s must be a REF (sha, release or series)",
			    field);
		return -1;
	}
	if (!ref_parse(json_string_value(v), &ref, rp, field) && !ref_resolve(c, &ref, rp, field)) {
		snprintf(out, cap, "%.*s", (int)strcspn(ref.commit_ids + 1, ",}"), ref.commit_ids + 1);
		rc = 0;
	}
	ref_release(&ref);
	return rc;
}

/* The id of a row named by sql with params; -1 answered (404 naming field). */
static int one_id(PGconn *c, const char *sql, int n, const char *const *params,
		  const char *field, const char *what, char *out, size_t cap, struct reply *rp)
{
	PGresult *r = db_exec(c, sql, n, params);
	int rc = -1;

	if (!db_ok(r))
		reply_db_error(rp, c, r, "reading the key");
	else if (PQntuples(r) == 0)
		reply_error(rp, 404, "not_found", field, "no %s", what);
	else {
		snprintf(out, cap, "%s", PQgetvalue(r, 0, 0));
		rc = 0;
	}
	PQclear(r);
	return rc;
}

void api_bisections_post(struct request *rq, struct reply *rp)
{
	json_error_t jerr;
	json_t *body = json_loadb(rq->body.data ? rq->body.data : "", rq->body.len,
				  JSON_REJECT_DUPLICATES, &jerr);
	struct decode_error derr;
	char *params = NULL, *variant = NULL;
	char good[24], bad[24], mid[24], tid[24], vid[24], metid[24];
	const char *machine, *metric;
	PGresult *failed = NULL;
	PGconn *c;
	long id;

	if (!body || !json_is_object(body)) {
		reply_error(rp, 400, body ? "invalid" : "malformed", NULL,
			    body ? "the body must be a JSON object" : "line %d, column %d: %s",
			    jerr.line, jerr.column, jerr.text);
		goto out;
	}
	machine = json_string_value(json_object_get(body, "machine"));
	metric = json_string_value(json_object_get(body, "metric"));
	if (!machine || strlen(machine) > LIMIT_MACHINE_NAME) {
		reply_error(rp, 400, "invalid", "machine", "machine must name a machine");
		goto out;
	}
	if (!metric || strlen(metric) > LIMIT_METRIC_NAME) {
		reply_error(rp, 400, "invalid", "metric", "metric must name a metric");
		goto out;
	}
	if (ingest_decode_test(body, NULL, 1, &params, &variant, &derr)) {
		reply_error(rp, derr.status, derr.code, derr.field, "%s", derr.message);
		goto out;
	}
	if (!(c = db_get())) {
		reply_unavailable(rp);
		goto out;
	}
	{
		const char *pm[1] = {machine}, *pmet[1] = {metric}, *pv[1] = {variant};
		const char *pt[2] = {json_string_value(json_object_get(body, "suite")), params};
		if (one_commit(c, body, "good", good, sizeof(good), rp) ||
		    one_commit(c, body, "bad", bad, sizeof(bad), rp) ||
		    one_id(c, "SELECT id FROM machine WHERE name = $1", 1, pm, "machine",
			   "such machine", mid, sizeof(mid), rp) ||
		    one_id(c, "SELECT id FROM test WHERE suite = $1 AND params = $2::jsonb", 2, pt,
			   "suite", "runs of that test", tid, sizeof(tid), rp) ||
		    one_id(c, "SELECT id FROM variant WHERE knobs = $1::jsonb", 1, pv, "variant",
			   "runs of that variant", vid, sizeof(vid), rp) ||
		    one_id(c, "SELECT id FROM metric WHERE name = $1", 1, pmet, "metric",
			   "such metric", metid, sizeof(metid), rp))
			goto out;
	}
	id = bisect_start(c, good, bad, mid, tid, vid, metid, &failed);
	if (id < 0) {
		reply_db_error(rp, c, failed, "starting the bisection");
	} else if (id == 0) {
		reply_error(rp, 400, "invalid", "bad",
			    "bad is not a first-parent descendant of good (within the ancestor depth)");
	} else {
		char ids[24];
		snprintf(ids, sizeof(ids), "%ld", id);
		answer(rp, c, ids, 201);
	}
	PQclear(failed);
out:
	free(params);
	free(variant);
	json_decref(body);
}
