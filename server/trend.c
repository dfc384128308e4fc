/*
 * trend.c - trend histories: the runs of the key group and their commits,
 * ordered once (commit_order), and the group's samples read in (metric, run,
 * iteration) order from the key-group index, cut into points.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commit_order.h"
#include "db.h"
#include "trend.h"
#include "util.h"

/*
 * The group's valid runs with their commits, by run id (binary: ids and
 * times as integers, no text to parse). Times are PostgreSQL's: microseconds
 * since 2000-01-01 UTC.
 */
static const char SQL_RUNS[] =
	"SELECT r.id, r.run_id, r.received_at, c.id, c.sha, c.parent_sha, c.release, c.subject,"
	" c.committed_at FROM run r JOIN commits c ON c.id = r.commit_id"
	" WHERE r.machine_id = $1 AND r.test_id = $2 AND r.variant_id = $3 AND r.valid"
	" ORDER BY r.id";

/*
 * The group's samples from the key-group index (migration 008): one range
 * per month, in (metric, run, iteration) order, values included. Two
 * statements, not "$4 IS NULL OR metric_id = $4": the plan PostgreSQL caches
 * for that one would read every metric and filter. Samples of invalid runs
 * are in the ranges too; the runs above leave them out.
 */
#define SQL_SAMPLES_OF(metric_cond)                                                   \
	"SELECT s.metric_id, s.run_id, s.value FROM sample s"                         \
	" WHERE s.key_group_id = (SELECT id FROM key_group"                           \
	"  WHERE machine_id = $1 AND test_id = $2 AND variant_id = $3)" metric_cond \
	" ORDER BY s.metric_id, s.run_id, s.iteration"
static const char SQL_SAMPLES_METRIC[] = SQL_SAMPLES_OF(" AND s.metric_id = $4");
static const char SQL_SAMPLES_ALL[] = SQL_SAMPLES_OF("");

enum { COL_RUN, COL_RUN_ID, COL_RECEIVED, COL_COMMIT, COL_SHA, COL_PARENT, COL_RELEASE,
       COL_SUBJECT, COL_COMMITTED };

/* PostgreSQL's epoch (2000-01-01) in Unix seconds */
#define PG_EPOCH_UNIX 946684800LL

struct run_ref {
	long id;     /* run.id */
	size_t rank; /* its commit's rank in commit order */
	const char *run_id;
};

static const char *opt(PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

static int run_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = ((const struct run_ref *)b)->id;
	return x < y ? -1 : x > y;
}

/* rows of the runs result (arg) ordered by commit id, then run id */
static int by_commit(const void *a, const void *b, void *arg)
{
	const PGresult *r = arg;
	int x = *(const int *)a, y = *(const int *)b;
	int64_t cx = db_int8(r, x, COL_COMMIT), cy = db_int8(r, y, COL_COMMIT);
	return cx != cy ? (cx < cy ? -1 : 1) : x - y;
}

/* 2024-03-01T12:00:00Z from microseconds since 2000-01-01 (to the second, down) */
static void format_date(int64_t pg_us, char out[24])
{
	int64_t s = pg_us / 1000000 - (pg_us % 1000000 < 0);
	time_t t = (time_t)(s + PG_EPOCH_UNIX);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(out, 24, "%Y-%m-%dT%H:%M:%SZ", &tm))
		out[0] = '\0';
}

/*
 * Commits of the runs, in commit order: g->commits, g->dates, and for every
 * run (g->runs_res row) its commit's rank in runs[]. A commit's date for
 * ordering is its commit date, else the first arrival of its runs.
 */
static void order_commits(struct trend_group *g, struct run_ref *runs)
{
	PGresult *r = g->runs_res;
	int n = PQntuples(r);
	int *rows = xcalloc((size_t)n + 1, sizeof(*rows));
	size_t *first = xcalloc((size_t)n + 1, sizeof(*first)); /* per commit: a row */
	struct commit_node *nodes = xcalloc((size_t)n + 1, sizeof(*nodes));
	size_t *rank = xcalloc((size_t)n + 1, sizeof(*rank)), nc = 0;
	int *commit_of = xcalloc((size_t)n + 1, sizeof(*commit_of)); /* per row */

	for (int i = 0; i < n; i++)
		rows[i] = i;
	qsort_r(rows, (size_t)n, sizeof(*rows), by_commit, r);
	for (int k = 0; k < n; k++) {
		int i = rows[k];
		double arrived = (double)db_int8(r, i, COL_RECEIVED) / 1e6;

		if (!k || db_int8(r, i, COL_COMMIT) != db_int8(r, rows[k - 1], COL_COMMIT)) {
			struct commit_node *cn = &nodes[nc];
			first[nc] = (size_t)i;
			cn->sha = opt(r, i, COL_SHA);
			cn->parent = opt(r, i, COL_PARENT);
			cn->when = PQgetisnull(r, i, COL_COMMITTED)
					   ? arrived
					   : (double)db_int8(r, i, COL_COMMITTED) / 1e6;
			cn->index = nc++;
		} else if (PQgetisnull(r, i, COL_COMMITTED) && arrived < nodes[nc - 1].when) {
			nodes[nc - 1].when = arrived;
		}
		commit_of[i] = (int)nc - 1;
	}
	commit_order(nodes, nc);
	g->ncommits = nc;
	g->commits = xcalloc(nc + 1, sizeof(*g->commits));
	g->dates = xcalloc(nc + 1, sizeof(*g->dates));
	for (size_t k = 0; k < nc; k++) {
		int i = (int)first[nodes[k].index];
		struct trend_commit *tc = &g->commits[k];

		rank[nodes[k].index] = k;
		tc->id = (long)db_int8(r, i, COL_COMMIT);
		tc->sha = opt(r, i, COL_SHA);
		tc->parent = opt(r, i, COL_PARENT);
		tc->release = opt(r, i, COL_RELEASE);
		tc->subject = opt(r, i, COL_SUBJECT);
		if (!PQgetisnull(r, i, COL_COMMITTED)) {
			format_date(db_int8(r, i, COL_COMMITTED), g->dates[k]);
			tc->date = g->dates[k];
		}
	}
	for (int i = 0; i < n; i++) {
		runs[i].id = (long)db_int8(r, i, COL_RUN);
		runs[i].run_id = PQgetvalue(r, i, COL_RUN_ID);
		runs[i].rank = rank[commit_of[i]];
	}
	free(commit_of);
	free(rank);
	free(nodes);
	free(first);
	free(rows);
}

int trend_load(PGconn *c, const char *machine_id, const char *test_id, const char *variant_id,
	       const char *metric_id, size_t min_commits, struct trend_group *g,
	       PGresult **failed)
{
	const char *params[4] = {machine_id, test_id, variant_id, metric_id};
	struct run_ref *runs;
	int nruns, ns;

	memset(g, 0, sizeof(*g));
	*failed = NULL;
	g->runs_res = db_exec_binary(c, SQL_RUNS, 3, params);
	if (!db_ok(g->runs_res)) {
		*failed = g->runs_res;
		g->runs_res = NULL;
		return -1;
	}
	nruns = PQntuples(g->runs_res);
	runs = xcalloc((size_t)nruns + 1, sizeof(*runs));
	order_commits(g, runs);
	if (g->ncommits >= min_commits) { /* else too short a history: no trends */
		g->samples_res = metric_id ? db_exec_binary(c, SQL_SAMPLES_METRIC, 4, params)
					   : db_exec_binary(c, SQL_SAMPLES_ALL, 3, params);
		if (!db_ok(g->samples_res)) {
			*failed = g->samples_res;
			g->samples_res = NULL;
			free(runs);
			trend_release(g);
			return -1;
		}
	}

	ns = g->samples_res ? PQntuples(g->samples_res) : 0;
	for (int i = 0; i < ns;) {
		int64_t mid = db_int8(g->samples_res, i, 0);
		size_t n = g->ncommits;
		size_t *slot = xcalloc(n + 1, sizeof(*slot)); /* 1 per rank with samples */
		struct trend *t;

		g->trends = xrealloc(g->trends, (g->ntrends + 1) * sizeof(*g->trends));
		t = &g->trends[g->ntrends++];
		memset(t, 0, sizeof(*t));
		t->metric_id = (long)mid;
		t->points = xcalloc(n + 1, sizeof(*t->points));
		for (; i < ns && db_int8(g->samples_res, i, 0) == mid; i++) {
			long rid = (long)db_int8(g->samples_res, i, 1);
			const struct run_ref *run = bsearch(&rid, runs, (size_t)nruns, sizeof(*runs),
							    run_cmp);
			struct trend_point *p;

			/* an invalid run, or one committed between the two
			 * statements: not in this answer */
			if (!run)
				continue;
			p = &t->points[run->rank];
			slot[run->rank] = 1;
			p->commit = &g->commits[run->rank];
			if (p->n == p->cap) {
				p->cap = p->cap ? p->cap * 2 : 8;
				p->samples = xrealloc(p->samples, p->cap * sizeof(double));
			}
			p->samples[p->n++] = db_float8(g->samples_res, i, 2);
			if (!p->nruns || p->runs[p->nruns - 1] != run->run_id) {
				if (p->nruns == p->runcap) {
					p->runcap = p->runcap ? p->runcap * 2 : 4;
					p->runs = xrealloc(p->runs, p->runcap * sizeof(char *));
				}
				p->runs[p->nruns++] = run->run_id;
			}
		}
		/* keep only commits with samples, in commit order */
		for (size_t r = 0; r < n; r++)
			if (slot[r])
				t->points[t->npoints++] = t->points[r];
		free(slot);
	}
	free(runs);
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
	free(g->dates);
	PQclear(g->runs_res);
	PQclear(g->samples_res);
	memset(g, 0, sizeof(*g));
}
