/*
 * trend.c - trend histories: commits of the key group ordered once
 * (commit_order), samples read in (metric, commit, run, iteration) order and
 * cut into points.
 */
#include <stdlib.h>
#include <string.h>

#include "commit_order.h"
#include "db.h"
#include "trend.h"
#include "util.h"

static const char SQL_COMMITS[] =
	"SELECT c.id, c.sha, c.parent_sha, c.release, c.subject,"
	" to_char(c.committed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),"
	" extract(epoch FROM coalesce(c.committed_at, min(r.received_at)))"
	" FROM commits c JOIN run r ON r.commit_id = c.id"
	" WHERE r.machine_id = $1 AND r.test_id = $2 AND r.variant_id = $3 AND r.valid"
	" GROUP BY c.id";

/*
 * Each run's samples by its primary key, in the one partition of the run's
 * month (a LATERAL subquery that OFFSET 0 keeps from being flattened, so
 * the planner cannot turn it into a scan of every partition: on 6 M samples
 * over 17 months that plan took 185 ms for one metric, this one 14 ms).
 * Sequential scans are turned off around it: a partition filled since its
 * last ANALYZE looks empty to the planner, which would then scan it whole
 * once per run (600 ms for 2,000 runs instead of 30).
 */
static const char SQL_SEQSCAN_OFF[] = "SELECT set_config('enable_seqscan', 'off', false)";
static const char SQL_SEQSCAN_ON[] = "SELECT set_config('enable_seqscan', 'on', false)";

/*
 * Two statements, not "$4 IS NULL OR metric_id = $4": the plan PostgreSQL
 * caches for that one probes by run alone and filters the metric (80 ms
 * instead of 15 on 200 metrics a run, a second on the 50 M-sample bench).
 * No join with metric: in the cached plan it was joined, all 5,000 names,
 * once per run (1.4 s); the callers know their metrics by id.
 */
#define SQL_SAMPLES_OF(metric_cond)                                                              \
	"SELECT s.metric_id, r.commit_id, r.run_id, s.value"                                     \
	" FROM run r CROSS JOIN LATERAL (SELECT s.metric_id, s.value, s.iteration FROM sample s" \
	"  WHERE s.run_id = r.id AND s.at = r.received_at" metric_cond " OFFSET 0) s"             \
	" WHERE r.machine_id = $1 AND r.test_id = $2 AND r.variant_id = $3 AND r.valid"          \
	" ORDER BY s.metric_id, r.commit_id, r.id, s.iteration"
static const char SQL_SAMPLES_METRIC[] = SQL_SAMPLES_OF(" AND s.metric_id = $4");
static const char SQL_SAMPLES_ALL[] = SQL_SAMPLES_OF("");

static const char *opt(PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

static int id_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = ((const struct trend_commit *)b)->id;
	return x < y ? -1 : x > y;
}

static int by_id(const void *a, const void *b)
{
	long x = ((const struct trend_commit *)a)->id, y = ((const struct trend_commit *)b)->id;
	return x < y ? -1 : x > y;
}

int trend_load(PGconn *c, const char *machine_id, const char *test_id, const char *variant_id,
	       const char *metric_id, size_t min_commits, struct trend_group *g,
	       PGresult **failed)
{
	const char *params[4] = {machine_id, test_id, variant_id, metric_id};
	struct commit_node *nodes;
	struct trend_commit *by_id_sorted;
	size_t *rank;
	int n, ns;

	memset(g, 0, sizeof(*g));
	*failed = NULL;
	g->commits_res = db_exec(c, SQL_COMMITS, 3, params);
	if (!db_ok(g->commits_res)) {
		*failed = g->commits_res;
		g->commits_res = NULL;
		return -1;
	}
	if ((size_t)PQntuples(g->commits_res) < min_commits) {
		g->samples_res = NULL; /* too short a history: no trends */
	} else {
		PQclear(db_exec(c, SQL_SEQSCAN_OFF, 0, NULL));
		g->samples_res = metric_id ? db_exec(c, SQL_SAMPLES_METRIC, 4, params)
					   : db_exec(c, SQL_SAMPLES_ALL, 3, params);
		PQclear(db_exec(c, SQL_SEQSCAN_ON, 0, NULL));
	}
	if (g->samples_res && !db_ok(g->samples_res)) {
		*failed = g->samples_res;
		g->samples_res = NULL;
		trend_release(g);
		return -1;
	}
	n = PQntuples(g->commits_res);
	g->ncommits = (size_t)n;
	nodes = xcalloc((size_t)n + 1, sizeof(*nodes));
	by_id_sorted = xcalloc((size_t)n + 1, sizeof(*by_id_sorted));
	for (int i = 0; i < n; i++) {
		struct trend_commit *tc = &by_id_sorted[i];
		tc->id = strtol(PQgetvalue(g->commits_res, i, 0), NULL, 10);
		tc->sha = opt(g->commits_res, i, 1);
		tc->parent = opt(g->commits_res, i, 2);
		tc->release = opt(g->commits_res, i, 3);
		tc->subject = opt(g->commits_res, i, 4);
		tc->date = opt(g->commits_res, i, 5);
		nodes[i].sha = tc->sha;
		nodes[i].parent = tc->parent;
		nodes[i].when = strtod(PQgetvalue(g->commits_res, i, 6), NULL);
		nodes[i].index = (size_t)i;
	}
	commit_order(nodes, (size_t)n);
	g->commits = xcalloc((size_t)n + 1, sizeof(*g->commits));
	for (int i = 0; i < n; i++)
		g->commits[i] = by_id_sorted[nodes[i].index];
	/* rank of each commit in commit order, looked up by id */
	qsort(by_id_sorted, (size_t)n, sizeof(*by_id_sorted), by_id);
	rank = xcalloc((size_t)n + 1, sizeof(*rank));
	for (int i = 0; i < n; i++) {
		struct trend_commit *tc = bsearch(&g->commits[i].id, by_id_sorted, (size_t)n,
						  sizeof(*by_id_sorted), id_cmp);
		rank[tc - by_id_sorted] = (size_t)i;
	}

	ns = g->samples_res ? PQntuples(g->samples_res) : 0;
	for (int i = 0; i < ns;) {
		long mid = strtol(PQgetvalue(g->samples_res, i, 0), NULL, 10);
		struct trend *t;
		size_t *slot = xcalloc((size_t)n + 1, sizeof(*slot)); /* point index + 1 per rank */

		g->trends = xrealloc(g->trends, (g->ntrends + 1) * sizeof(*g->trends));
		t = &g->trends[g->ntrends++];
		memset(t, 0, sizeof(*t));
		t->metric_id = mid;
		t->points = xcalloc((size_t)n + 1, sizeof(*t->points));
		for (; i < ns && strtol(PQgetvalue(g->samples_res, i, 0), NULL, 10) == mid; i++) {
			long cid = strtol(PQgetvalue(g->samples_res, i, 1), NULL, 10);
			struct trend_commit *tc = bsearch(&cid, by_id_sorted, (size_t)n,
							  sizeof(*by_id_sorted), id_cmp);
			size_t rk;
			struct trend_point *p;
			const char *run = PQgetvalue(g->samples_res, i, 2);

			/* a run committed between the two statements: not in this
			 * snapshot of the commits, so not in this answer either */
			if (!tc)
				continue;
			rk = rank[tc - by_id_sorted];
			p = &t->points[rk];
			slot[rk] = 1;
			p->commit = &g->commits[rk];
			if (p->n == p->cap) {
				p->cap = p->cap ? p->cap * 2 : 8;
				p->samples = xrealloc(p->samples, p->cap * sizeof(double));
			}
			p->samples[p->n++] = strtod(PQgetvalue(g->samples_res, i, 3), NULL);
			if (!p->nruns || strcmp(p->runs[p->nruns - 1], run)) {
				if (p->nruns == p->runcap) {
					p->runcap = p->runcap ? p->runcap * 2 : 4;
					p->runs = xrealloc(p->runs, p->runcap * sizeof(char *));
				}
				p->runs[p->nruns++] = run;
			}
		}
		/* keep only commits with samples, in commit order */
		for (size_t r = 0; r < (size_t)n; r++)
			if (slot[r])
				t->points[t->npoints++] = t->points[r];
		free(slot);
	}
	free(rank);
	free(nodes);
	free(by_id_sorted);
	return 0;
}

void trend_release(struct trend_group *g)
{
	for (size_t i = 0; i < g->ntrends; i++) {
		for (size_t p = 0; p < g->trends[i].npoints; p++) {
			free(g->trends[i].points[p].samples);
			free(g->trends[i].points[p].runs);
		}
		free(g->trends[i].points);
	}
	free(g->trends);
	free(g->commits);
	PQclear(g->commits_res);
	PQclear(g->samples_res);
	memset(g, 0, sizeof(*g));
}
