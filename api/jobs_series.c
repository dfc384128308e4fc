/*
 * jobs_series.c - what a lab reports of a series job: the commits it made
 * applying the series on its base (POST /api/v1/jobs/ID/applied), and a
 * series that does not apply.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api/jobs.h"
#include "lib/kperf_limits.h"
#include "server/db/db.h"
#include "server/robot/posted.h"

/* The job's series and how many patches it applies, from the job itself
 * or, for a job on a commit made from a patch, from that patch. */
static const char SQL_JOB_SERIES[] =
	"SELECT coalesce(j.series_id, pp.series_id), coalesce(j.apply_patches, pp.position),"
	" j.series_id IS NOT NULL FROM job j LEFT JOIN posted_patch pp ON j.series_id IS NULL"
	" AND pp.commit_id = j.commit_id WHERE j.id = $1::bigint ORDER BY pp.series_id DESC LIMIT 1";

static int sha_ok(const char *s)
{
	return s && strlen(s) == 40 && strspn(s, "0123456789abcdef") == 40;
}

static int applied_tx(PGconn *c, const char *id, PGresult *js, const char **shas, int n,
		      char *why, size_t whylen)
{
	const char *sid = PQgetvalue(js, 0, 0);
	const char *p2[2] = {id, shas[n - 1]};
	const char *p1[1] = {sid};
	int rc;

	if (db_do(c, "BEGIN", 0, NULL))
		return -1;
	rc = posted_applied(c, strtol(sid, NULL, 10), n, shas, why, whylen);
	if (!rc && !strcmp(PQgetvalue(js, 0, 2), "t"))
		rc = db_do(c,
			   "UPDATE job SET commit_id = (SELECT id FROM commits WHERE sha = $2)"
			   " WHERE id = $1::bigint",
			   2, p2) ||
		     db_do(c,
			   "UPDATE plan_target SET state = 'applied', updated_at = now()"
			   " WHERE id = (SELECT plan_target_id FROM job WHERE id = $1::bigint)"
			   " AND state = 'queued'",
			   1, p2)
			     ? -1
			     : 0;
	if (!rc)
		rc = db_do(c,
			   "UPDATE posted_series SET state = 'applied', updated_at = now()"
			   " WHERE id = $1::bigint AND state IN ('posted', 'queued')",
			   1, p1)
			     ? -1
			     : 0;
	if (rc || db_do(c, "COMMIT", 0, NULL)) {
		PQclear(PQexec(c, "ROLLBACK"));
		return rc > 0 ? 1 : -1;
	}
	return 0;
}

void jobs_applied(PGconn *c, struct reply *rp, const char *id, json_t *body)
{
	const char *p[1] = {id};
	json_t *commits = json_object_get(body, "commits"), *v;
	const char *shas[LIMIT_SERIES_PATCHES];
	PGresult *js = db_exec(c, SQL_JOB_SERIES, 1, p);
	char why[600];
	size_t i, n = json_array_size(commits);
	long want;
	int rc;

	if (!db_ok(js) || PQntuples(js) != 1) {
		reply_db_error(rp, c, js, "reading the job");
		goto out;
	}
	if (PQgetisnull(js, 0, 0)) {
		reply_error(rp, 409, "conflict", "id", "job %s applies no series", id);
		goto out;
	}
	want = strtol(PQgetvalue(js, 0, 1), NULL, 10);
	if (!json_is_array(commits) || (long)n != want) {
		reply_error(rp, 400, "invalid", "commits",
			    "commits must be the %ld shas made from the series' patches, in order",
			    want);
		goto out;
	}
	json_array_foreach(commits, i, v) {
		shas[i] = json_string_value(v);
		if (!sha_ok(shas[i])) {
			reply_error(rp, 400, "invalid", "commits",
				    "commits[%zu] must be a full sha of 40 lower-case hex digits", i);
			goto out;
		}
	}
	rc = applied_tx(c, id, js, shas, (int)n, why, sizeof(why));
	if (rc < 0) {
		reply_db_status(rp, 503, "recording the applied series");
	} else if (rc > 0) {
		reply_error(rp, 400, "invalid", "commits", "%s", why);
	} else {
		rp->status = 200;
		rp->content_type = "application/json";
		buf_printf(&rp->body, "{\"job\":%s,\"commit\":\"%s\",\"patches\":%zu}", id,
			   shas[n - 1], n);
	}
out:
	PQclear(js);
}

int jobs_failed_series(PGconn *c, const char *id, const char *reason)
{
	const char *state = !strncmp(reason, "does not apply", 14)	? "does_not_apply"
			    : !strncmp(reason, "does not build", 14) ? "does_not_build"
								     : NULL;
	char detail[600];
	const char *p[3] = {id, detail, state};

	if (!state)
		return 0;
	/* the first line: the build's error lines follow it */
	snprintf(detail, sizeof(detail), "%.*s", (int)strcspn(reason, "\n"), reason);
	return db_do(c,
		     "UPDATE posted_series SET state = $3, state_detail = $2,"
		     " updated_at = now() WHERE id = (SELECT series_id FROM job WHERE id = $1::bigint)",
		     3, p);
}
