/*
 * trend.c - trend histories: the runs of the key group and their commits
 * (commit_cache), ordered once (commit_order), and the group's samples read
 * in (metric, run, iteration) order from the key-group index, cut into points.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "server/reads/commit_cache.h"
#include "server/reads/commit_order.h"
#include "server/db/db.h"
#include "server/stats/stats.h"
#include "server/reads/trend.h"
#include "lib/util.h"

/*
 * The group's valid runs (binary: ids and times as integers, no text to
 * parse; times are PostgreSQL's, microseconds since 2000-01-01 UTC), in no
 * order: sorted here. Their commits come from commit_cache.c: joining the
 * runs with commits here cost ~1.5 ms of the database's time per 2,000 runs
 * (a hash of every commit), once per request.
 */
static const char SQL_RUNS[] =
	"SELECT r.id, r.commit_id, r.received_at, r.run_id FROM run r"
	" WHERE r.machine_id = $1 AND r.test_id = $2 AND r.variant_id = $3 AND r.valid";

/*
 * The group's samples from the key-group index (migration 008): one range
 * per month, in (metric, run, iteration) order, values included. Two
 * statements, not "$4 IS NULL OR metric_id = $4": the plan PostgreSQL caches
 * for that one would read every metric and filter. Samples of invalid runs
 * are in the ranges too; the runs above leave them out. Read with
 * db_exec_indexed: a month's partition filled since its last ANALYZE would
 * otherwise be scanned whole.
 */
#define SQL_SAMPLES_OF(metric_cond)                                                   \
	"SELECT s.metric_id, s.run_id, s.value FROM sample s"                         \
	" WHERE s.key_group_id = (SELECT id FROM key_group"                           \
	"  WHERE machine_id = $1 AND test_id = $2 AND variant_id = $3)" metric_cond \
	" ORDER BY s.metric_id, s.run_id, s.iteration"
static const char SQL_SAMPLES_METRIC[] = SQL_SAMPLES_OF(" AND s.metric_id = $4");
static const char SQL_SAMPLES_ALL[] = SQL_SAMPLES_OF("");

/* The archived runs' summaries (migration 015), by the same key, in (metric,
 * run) order: empty, one index probe, until a month is archived. */
#define SQL_SUMMARIES_OF(metric_cond)                                                 \
	"SELECT s.metric_id, s.run_id, s.n::bigint, s.mean, s.m2, s.min, s.max,"      \
	" coalesce(s.rsum, 'NaN') FROM sample_summary s"                              \
	" WHERE s.key_group_id = (SELECT id FROM key_group"                           \
	"  WHERE machine_id = $1 AND test_id = $2 AND variant_id = $3)" metric_cond \
	" ORDER BY s.metric_id, s.run_id"
static const char SQL_SUMMARIES_METRIC[] = SQL_SUMMARIES_OF(" AND s.metric_id = $4");
static const char SQL_SUMMARIES_ALL[] = SQL_SUMMARIES_OF("");

enum { RUN_ID, RUN_COMMIT, RUN_RECEIVED, RUN_RUN_ID };

struct run_ref {
	long id, commit;                /* run.id, commits.id */
	int64_t received;               /* PostgreSQL microseconds */
	int row;                        /* in the result */
	size_t rank;                    /* its commit's rank in commit order */
	const struct commit_info *info; /* its commit */
};

static int run_cmp(const void *a, const void *b)
{
	long x = ((const struct run_ref *)a)->id, y = ((const struct run_ref *)b)->id;
	return x < y ? -1 : x > y;
}

/* by commit, then by run */
static int commit_cmp(const void *a, const void *b)
{
	const struct run_ref *x = *(struct run_ref *const *)a, *y = *(struct run_ref *const *)b;
	if (x->commit != y->commit)
		return x->commit < y->commit ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/*
 * The commits of the runs in commit order (g->commits, their dates in
 * g->dates) and each run's rank. A commit's date for ordering is its commit
 * date, else the first arrival of its runs.
 */
static void order_commits(struct trend_group *g, struct run_ref *runs, size_t n)
{
	struct run_ref **by = xcalloc(n + 1, sizeof(*by)); /* by commit, then run */
	struct commit_node *nodes = xcalloc(n + 1, sizeof(*nodes));
	size_t *first = xcalloc(n + 1, sizeof(*first)); /* per commit: its first in by[] */
	size_t nc = 0;

	for (size_t i = 0; i < n; i++)
		by[i] = &runs[i];
	qsort(by, n, sizeof(*by), commit_cmp);
	for (size_t i = 0; i < n; i++) {
		const struct commit_info *ci = by[i]->info;
		if (i && by[i]->commit == by[i - 1]->commit) {
			/* the runs of a commit come in id order; the first to arrive
			 * is not always the first made */
			if (!ci->has_date && (double)by[i]->received / 1e6 < nodes[nc - 1].when)
				nodes[nc - 1].when = (double)by[i]->received / 1e6;
			continue;
		}
		first[nc] = i;
		nodes[nc].sha = ci->sha;
		nodes[nc].parent = ci->parent;
		nodes[nc].when = (double)(ci->has_date ? ci->committed : by[i]->received) / 1e6;
		nodes[nc].index = nc;
		nc++;
	}
	commit_order(nodes, nc);
	g->ncommits = nc;
	g->commits = xcalloc(nc + 1, sizeof(*g->commits));
	for (size_t k = 0; k < nc; k++) {
		size_t f = first[nodes[k].index];
		const struct commit_info *ci = by[f]->info;
		struct trend_commit *tc = &g->commits[k];

		tc->id = by[f]->commit;
		tc->sha = ci->sha;
		tc->parent = ci->parent;
		tc->release = ci->release;
		tc->subject = ci->subject;
		tc->json = ci->json;
		tc->json_len = ci->json_len;
		for (size_t i = f; i < n && by[i]->commit == tc->id; i++)
			by[i]->rank = k;
	}
	free(first);
	free(nodes);
	free(by);
}

/* info[i]: the commit ids[i] from g's generation (commit_cache_fill). */
static int fill_commits(PGconn *c, struct trend_group *g, const long *ids, size_t n,
			const struct commit_info **info, PGresult **failed)
{
	return commit_cache_fill(c, g->gen, ids, n, info, failed);
}

/* Each run's commit (runs[i].info), as fill_commits finds them. */
static int runs_commits(PGconn *c, struct trend_group *g, struct run_ref *runs, size_t n,
			PGresult **failed)
{
	long *ids = xcalloc(n + 1, sizeof(*ids));
	const struct commit_info **info = xcalloc(n + 1, sizeof(*info));
	int rc;

	for (size_t i = 0; i < n; i++)
		ids[i] = runs[i].commit;
	rc = fill_commits(c, g, ids, n, info, failed);
	for (size_t i = 0; i < n; i++)
		runs[i].info = info[i];
	free(ids);
	free(info);
	return rc;
}

/*
 * The group's runs, sorted by id, with their commits (a run whose commit is
 * gone is left out), from the epoch's and the runs' results; *missing when
 * the cache lacks some commits, to be read once the connection is free.
 */
static struct run_ref *read_runs(struct trend_group *g, PGresult *epoch, PGresult *r,
				 size_t *nruns, int *missing)
{
	size_t n = (size_t)PQntuples(r);
	struct run_ref *runs = xcalloc(n + 1, sizeof(*runs));

	for (size_t i = 0; i < n; i++) {
		runs[i].id = (long)db_int8(r, (int)i, RUN_ID);
		runs[i].commit = (long)db_int8(r, (int)i, RUN_COMMIT);
		runs[i].received = db_int8(r, (int)i, RUN_RECEIVED);
		runs[i].row = (int)i;
	}
	qsort(runs, n, sizeof(*runs), run_cmp);
	*nruns = n;
	g->gen = commit_cache_take(PQntuples(epoch) ? db_int8(epoch, 0, 0) : -1);
	*missing = runs_commits(NULL, g, runs, n, NULL) == 1; /* the cache only */
	return runs;
}

/* Leave out the runs without a commit (deleted since); the count left. */
static size_t drop_orphans(struct run_ref *runs, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (runs[i].info)
			runs[k++] = runs[i];
	return k;
}

/* The statements' results into g->extra_res; 0, or -1 with *failed. */
static int read_extra(PGconn *c, const struct db_stmt *extra, int nextra, struct trend_group *g,
		      PGresult **failed)
{
	for (int i = 0; i < nextra; i++) {
		PGresult *r = db_exec(c, extra[i].sql, extra[i].nparams, extra[i].params);
		if (!db_ok(r)) {
			*failed = r;
			return -1;
		}
		g->extra_res[i] = r;
	}
	return 0;
}

/*
 * The commit epoch and the runs, then the samples, then the extra
 * statements, sent together when every history is wanted (min_commits 0):
 * PostgreSQL reads the samples while the commits are put in order here
 * (when the cache knows them all). Else the samples only once the commits
 * are known to be enough. 0, or -1 with *failed; *nruns runs in *runs.
 */
static int read_group(PGconn *c, const char *const *params, size_t min_commits,
		      const struct db_stmt *extra, int nextra, struct trend_group *g,
		      struct run_ref **runs, size_t *nruns, PGresult **failed)
{
	const char *metric = params[3];
	const char *sql = metric ? SQL_SAMPLES_METRIC : SQL_SAMPLES_ALL;
	const char *sums = metric ? SQL_SUMMARIES_METRIC : SQL_SUMMARIES_ALL;
	int np = metric ? 4 : 3, missing = 0;
	PGresult *epoch;

	if (!min_commits) {
		/* outside a transaction the pipeline's Sync resets the planner
		 * setting: no RESET statement */
		int local = PQtransactionStatus(c) == PQTRANS_IDLE, x = local ? 5 : 6;
		struct db_stmt st[6 + TREND_EXTRA_MAX] = {
			{COMMIT_CACHE_SQL_EPOCH, 0, NULL, 1, NULL, NULL},
			{SQL_RUNS, 3, params, 1, NULL, NULL},
			local ? db_prefer_index_local_stmt(1) : db_prefer_index_stmt(1),
			{sql, np, params, 1, NULL, NULL},
			{sums, np, params, 1, NULL, NULL},
			db_prefer_index_stmt(0)};
		PGresult *r[6 + TREND_EXTRA_MAX] = {0};
		int n = x + nextra, rc = 0;

		for (int i = 0; i < nextra; i++)
			st[x + i] = extra[i];
		if (db_pipeline_send(c, n, st)) {
			*failed = PQmakeEmptyPGresult(c, PGRES_FATAL_ERROR);
			return -1;
		}
		r[0] = db_pipeline_next(c);
		r[1] = db_pipeline_next(c);
		if (db_ok(r[0]) && db_ok(r[1])) {
			*runs = read_runs(g, r[0], r[1], nruns, &missing);
			g->runs_res = r[1];
			if (!missing)
				order_commits(g, *runs, *nruns);
		}
		for (int i = 2; i < n; i++)
			r[i] = db_pipeline_next(c);
		db_pipeline_end(c);
		for (int i = 0; i < n && !rc; i++)
			if (!db_ok(r[i])) { /* the first to fail (the others were aborted) */
				*failed = r[i];
				r[i] = NULL;
				rc = -1;
			}
		g->runs_res = r[1];
		g->samples_res = r[3];
		g->summaries_res = r[4];
		PQclear(r[0]);
		PQclear(r[2]);
		if (!local)
			PQclear(r[5]);
		for (int i = 0; i < nextra; i++)
			g->extra_res[i] = r[x + i];
		if (rc || !missing)
			return rc;
		if (runs_commits(c, g, *runs, *nruns, failed))
			return -1;
		*nruns = drop_orphans(*runs, *nruns);
		order_commits(g, *runs, *nruns);
		return 0;
	}
	epoch = db_exec_binary(c, COMMIT_CACHE_SQL_EPOCH, 0, NULL); /* before the commits */
	if (!db_ok(epoch)) {
		*failed = epoch;
		return -1;
	}
	g->runs_res = db_exec_binary(c, SQL_RUNS, 3, params);
	if (!db_ok(g->runs_res)) {
		PQclear(epoch);
		*failed = g->runs_res;
		g->runs_res = NULL;
		return -1;
	}
	*runs = read_runs(g, epoch, g->runs_res, nruns, &missing);
	PQclear(epoch);
	if (missing && runs_commits(c, g, *runs, *nruns, failed))
		return -1;
	*nruns = drop_orphans(*runs, *nruns);
	order_commits(g, *runs, *nruns);
	if (g->ncommits >= min_commits) { /* else too short a history: no trends */
		g->samples_res = db_exec_indexed(c, sql, np, params);
		if (!db_ok(g->samples_res)) {
			*failed = g->samples_res;
			g->samples_res = NULL;
			return -1;
		}
		g->summaries_res = db_exec_binary(c, sums, np, params);
		if (!db_ok(g->summaries_res)) {
			*failed = g->summaries_res;
			g->summaries_res = NULL;
			return -1;
		}
	}
	return read_extra(c, extra, nextra, g, failed);
}

int trend_commit_names(PGconn *c, struct trend_group *g, const long *ids, size_t n,
		       const char **out, PGresult **failed)
{
	const struct commit_info **info = xcalloc(n + 1, sizeof(*info));
	int rc = fill_commits(c, g, ids, n, info, failed);

	for (size_t i = 0; i < n; i++)
		out[i] = !info[i] ? NULL : info[i]->sha ? info[i]->sha : info[i]->release;
	free(info);
	return rc;
}

/*
 * The point of run id in t (its commit's, marked in slot), with the run in
 * its runs; NULL when the run is not in this answer (invalid, or committed
 * after the runs were read). *had (when not NULL) says whether the run was
 * in the point's runs already.
 */
static struct trend_point *point_add_run(struct trend_group *g, const struct run_ref *runs,
					 size_t nruns, struct trend *t, size_t *slot, int64_t id,
					 size_t *had)
{
	struct run_ref key = {.id = (long)id};
	const struct run_ref *run = bsearch(&key, runs, nruns, sizeof(*runs), run_cmp);
	struct trend_point *p;
	const char *run_id;

	if (!run)
		return NULL;
	run_id = PQgetvalue(g->runs_res, run->row, RUN_RUN_ID);
	p = &t->points[run->rank];
	slot[run->rank] = 1;
	p->commit = &g->commits[run->rank];
	if (had) { /* summaries: any of the point's runs */
		*had = 0;
		for (size_t k = 0; k < p->nruns && !*had; k++)
			*had = p->runs[k] == run_id;
		if (*had)
			return p;
	} else if (p->nruns && p->runs[p->nruns - 1] == run_id) { /* samples: in run order */
		return p;
	}
	if (p->nruns == p->runcap) {
		p->runcap = p->runcap ? p->runcap * 2 : 4;
		p->runs = xrealloc(p->runs, p->runcap * sizeof(char *));
	}
	p->runs[p->nruns++] = run_id;
	return p;
}

int trend_load(PGconn *c, const char *machine_id, const char *test_id, const char *variant_id,
	       const char *metric_id, size_t min_commits, const struct db_stmt *extra,
	       int nextra, struct trend_group *g, PGresult **failed)
{
	const char *params[4] = {machine_id, test_id, variant_id, metric_id};
	struct run_ref *runs = NULL;
	size_t nruns = 0;
	int ns, nsum;

	memset(g, 0, sizeof(*g));
	*failed = NULL;
	if (read_group(c, params, min_commits, extra, nextra, g, &runs, &nruns, failed))
		goto fail;

	ns = g->samples_res ? PQntuples(g->samples_res) : 0;
	nsum = g->summaries_res ? PQntuples(g->summaries_res) : 0;
	/* metric by metric, in id order, from both results */
	for (int i = 0, j = 0; i < ns || j < nsum;) {
		int64_t mid = i < ns ? db_int8(g->samples_res, i, 0) : INT64_MAX;
		size_t n = g->ncommits;
		size_t *slot = xcalloc(n + 1, sizeof(*slot)); /* 1 per rank with samples */
		struct trend *t;

		if (j < nsum && db_int8(g->summaries_res, j, 0) < mid)
			mid = db_int8(g->summaries_res, j, 0);
		g->trends = xrealloc(g->trends, (g->ntrends + 1) * sizeof(*g->trends));
		t = &g->trends[g->ntrends++];
		memset(t, 0, sizeof(*t));
		t->metric_id = (long)mid;
		t->points = xcalloc(n + 1, sizeof(*t->points));
		for (; i < ns && db_int8(g->samples_res, i, 0) == mid; i++) {
			struct trend_point *p = point_add_run(g, runs, nruns, t, slot,
							      db_int8(g->samples_res, i, 1), NULL);
			/* an invalid run, or one committed between the two
			 * statements: not in this answer */
			if (!p)
				continue;
			if (p->n == p->cap) {
				p->cap = p->cap ? p->cap * 2 : 8;
				p->samples = xrealloc(p->samples, p->cap * sizeof(double));
			}
			p->samples[p->n++] = db_float8(g->samples_res, i, 2);
		}
		for (; j < nsum && db_int8(g->summaries_res, j, 0) == mid; j++) {
			const PGresult *r = g->summaries_res;
			size_t had;
			struct trend_point *p;
			struct stats_moments m = {(size_t)db_int8(r, j, 2), db_float8(r, j, 3),
						  db_float8(r, j, 4), db_float8(r, j, 5),
						  db_float8(r, j, 6), db_float8(r, j, 7)};

			p = point_add_run(g, runs, nruns, t, slot, db_int8(r, j, 1), &had);
			if (!p || had) /* its samples were read too (archived meanwhile) */
				continue;
			stats_moments_merge(&p->arch, &m);
			p->narch++;
		}
		/* keep only commits with samples, in commit order */
		for (size_t r = 0; r < n; r++)
			if (slot[r])
				t->points[t->npoints++] = t->points[r];
		free(slot);
	}
	free(runs);
	return 0;
fail:
	free(runs);
	trend_release(g);
	return -1;
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
	commit_cache_put(g->gen);
	PQclear(g->runs_res);
	PQclear(g->samples_res);
	PQclear(g->summaries_res);
	for (int i = 0; i < TREND_EXTRA_MAX; i++)
		PQclear(g->extra_res[i]);
	memset(g, 0, sizeof(*g));
}
