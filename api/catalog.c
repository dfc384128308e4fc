/*
 * catalog.c - what kperf knows: machines, tests (suite + params) and
 * metrics, each as a paginated list; and the list helper every list shares.
 */
#include <stdio.h>

#include "../server/db.h"
#include "api.h"
#include "query.h"

void api_list(struct request *rq, struct reply *rp, const char *sql, int n,
	      const char *const *params, long limit, long offset)
{
	PGconn *c = db_get();
	PGresult *r;

	(void)rq;
	if (!c) {
		reply_unavailable(rp);
		return;
	}
	r = db_exec(c, sql, n, params);
	if (!db_ok(r) || PQntuples(r) != 1) {
		reply_db_error(rp, c, r, "listing");
	} else {
		rp->status = 200;
		rp->content_type = "application/json";
		buf_printf(&rp->body, "{\"items\":%s,\"total\":%s,\"limit\":%ld,\"offset\":%ld}",
			   PQgetvalue(r, 0, 1), PQgetvalue(r, 0, 0), limit, offset);
	}
	PQclear(r);
}

static void list2(struct request *rq, struct reply *rp, const char *sql, const char *filter)
{
	const char *params[3];
	char lim[24], off[24];
	long limit, offset;

	if (http_list_params(rq, rp, &limit, &offset))
		return;
	snprintf(lim, sizeof(lim), "%ld", limit);
	snprintf(off, sizeof(off), "%ld", offset);
	params[0] = filter ? http_query(rq, filter) : NULL;
	params[1] = lim;
	params[2] = off;
	api_list(rq, rp, sql, 3, params, limit, offset);
}

static const char SQL_MACHINES[] =
	"WITH f AS (SELECT m.id, m.name, m.cpu_model, m.nr_cpus, m.sockets, m.memory_mb,"
	"  m.numa_nodes, m.info, (SELECT count(*) FROM run r WHERE r.machine_id = m.id) AS runs,"
	"  (SELECT max(coalesce(r.started_at, r.received_at)) FROM run r"
	"   WHERE r.machine_id = m.id) AS last_run_at"
	" FROM machine m WHERE ($1::text IS NULL OR m.name = $1))"
	" SELECT (SELECT count(*) FROM f),"
	" coalesce((SELECT json_agg(p) FROM (SELECT * FROM f ORDER BY name"
	"  LIMIT $2 OFFSET $3) p), '[]')";

void api_machines_list(struct request *rq, struct reply *rp)
{
	list2(rq, rp, SQL_MACHINES, "name");
}

static const char SQL_TESTS[] =
	"WITH f AS (SELECT t.id, t.suite, t.params,"
	"  (SELECT count(*) FROM run r WHERE r.test_id = t.id) AS runs"
	" FROM test t WHERE ($1::text IS NULL OR t.suite = $1))"
	" SELECT (SELECT count(*) FROM f),"
	" coalesce((SELECT json_agg(p) FROM (SELECT * FROM f ORDER BY suite, params::text"
	"  LIMIT $2 OFFSET $3) p), '[]')";

void api_tests_list(struct request *rq, struct reply *rp)
{
	list2(rq, rp, SQL_TESTS, "suite");
}

/* metric= is a glob, turned into a LIKE pattern by query_glob_like. */
static const char SQL_METRICS[] =
	"WITH f AS (SELECT m.id, m.name, m.unit, m.direction FROM metric m"
	" WHERE ($1::text IS NULL OR m.name LIKE $1))"
	" SELECT (SELECT count(*) FROM f),"
	" coalesce((SELECT json_agg(p) FROM (SELECT * FROM f ORDER BY name"
	"  LIMIT $2 OFFSET $3) p), '[]')";

void api_metrics_list(struct request *rq, struct reply *rp)
{
	const char *glob = http_query(rq, "metric");
	struct buf like = BUF_INIT;
	const char *params[3];
	char lim[24], off[24];
	long limit, offset;

	if (http_list_params(rq, rp, &limit, &offset))
		return;
	if (glob)
		query_glob_like(&like, glob);
	snprintf(lim, sizeof(lim), "%ld", limit);
	snprintf(off, sizeof(off), "%ld", offset);
	params[0] = glob ? buf_str(&like) : NULL;
	params[1] = lim;
	params[2] = off;
	api_list(rq, rp, SQL_METRICS, 3, params, limit, offset);
	buf_release(&like);
}
