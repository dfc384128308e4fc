/*
 * catalog.c - what kperf knows: machines, tests (suite + params) and
 * metrics, each as a paginated list; and the list helper every list shares.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "server/db/db.h"
#include "lib/jsonw.h"
#include "lib/metric_role.h"
#include "api/api.h"
#include "api/query.h"

void api_list(struct request *rq, struct reply *rp, const char *sql, int n,
	      const char *const *filters)
{
	const char *params[API_LIST_FILTERS_MAX + 2];
	char lim[24], off[24];
	long limit, offset;
	PGconn *c;
	PGresult *r;

	if (http_list_params(rq, rp, &limit, &offset))
		return;
	snprintf(lim, sizeof(lim), "%ld", limit);
	snprintf(off, sizeof(off), "%ld", offset);
	for (int i = 0; i < n && i < API_LIST_FILTERS_MAX; i++)
		params[i] = filters[i];
	params[n] = lim;
	params[n + 1] = off;
	if (!(c = db_get())) {
		reply_unavailable(rp);
		return;
	}
	r = db_exec(c, sql, n + 2, params);
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

static void list_by(struct request *rq, struct reply *rp, const char *sql, const char *filter)
{
	const char *filters[1] = {http_query(rq, filter)};
	api_list(rq, rp, sql, 1, filters);
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
	list_by(rq, rp, SQL_MACHINES, "name");
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
	list_by(rq, rp, SQL_TESTS, "suite");
}

/* metric= is a glob, turned into a LIKE pattern by query_glob_like. */
static const char SQL_METRICS[] =
	"WITH f AS (SELECT m.id, m.name, m.unit, m.direction FROM metric m"
	" WHERE ($1::text IS NULL OR m.name LIKE $1))"
	" SELECT (SELECT count(*) FROM f),"
	" coalesce((SELECT json_agg(p) FROM (SELECT * FROM f ORDER BY name"
	"  LIMIT $2 OFFSET $3) p), '[]')";

/* With suite=S each item also says its role in S's runs (metric_role.h). */
static void add_roles(struct reply *rp, const char *suite)
{
	json_t *j = json_loadb(rp->body.data, rp->body.len, 0, NULL), *it;
	size_t i;
	char *text;

	if (!j)
		return;
	json_array_foreach(json_object_get(j, "items"), i, it) {
		const char *name = json_string_value(json_object_get(it, "name"));
		int rank = name ? metric_kpi_rank(name, suite) : -1;
		if (!name)
			continue;
		json_object_set_new(it, "role", json_string(metric_role_name(metric_role(name, suite))));
		if (rank >= 0)
			json_object_set_new(it, "kpi_rank", json_integer(rank));
	}
	text = jsonw_dump(j, 1);
	buf_release(&rp->body);
	buf_puts(&rp->body, text);
	free(text);
	json_decref(j);
}

void api_metrics_list(struct request *rq, struct reply *rp)
{
	const char *glob = http_query(rq, "metric");
	const char *suite = http_query(rq, "suite");
	struct buf like = BUF_INIT;
	const char *filters[1];

	if (glob)
		query_glob_like(&like, glob);
	filters[0] = glob ? buf_str(&like) : NULL;
	api_list(rq, rp, SQL_METRICS, 1, filters);
	if (suite && rp->status == 200)
		add_roles(rp, suite);
	buf_release(&like);
}
