/*
 * trend.h - the history of trend keys: for (machine, test, variant) and one
 * or all metrics, every commit's samples, commits in commit order. Read by
 * GET /api/v1/trend.
 */
#ifndef KPERF_TREND_H
#define KPERF_TREND_H

#include <libpq-fe.h>
#include <stddef.h>

#include "server/db/db.h"
#include "server/stats/stats.h"

struct trend_commit {
	long id;
	const char *sha, *parent, *release, *subject; /* borrowed; may be NULL */
	const char *json; /* borrowed: its members as a point shows them (commit_cache_json) */
	size_t json_len;
};

struct trend_point {
	const struct trend_commit *commit;
	double *samples; /* of the runs of months in the hot database */
	size_t n, cap;
	const char **runs; /* run_id of each run, borrowed */
	size_t nruns, runcap;
	struct stats_moments arch; /* the archived runs' summaries, joined */
	size_t narch;              /* archived runs (0: arch is empty) */
};

struct trend {
	long metric_id;
	struct trend_point *points; /* in commit order, only commits with samples */
	size_t npoints;
};

#define TREND_EXTRA_MAX 2

struct commit_gen;

struct trend_group {
	PGresult *runs_res, *samples_res, *summaries_res;
	struct commit_gen *gen;   /* the commit cache's generation, held */
	PGresult *extra_res[TREND_EXTRA_MAX]; /* of trend_load's extra statements */
	struct trend_commit *commits; /* in commit order */
	size_t ncommits;
	struct trend *trends;         /* one per metric, by metric id */
	size_t ntrends;
};

/*
 * Load the histories of (machine_id, test_id, variant_id), of metric_id only
 * when it is not NULL. Invalid runs are left out. With fewer than
 * min_commits commits the samples are not read (no trends). The nextra
 * (at most TREND_EXTRA_MAX) statements extra are run too, in the same
 * round trip when min_commits is 0, their results left in g->extra_res.
 * Returns 0, or -1 with *failed set to the failed result (the caller
 * reports and PQclears it).
 */
int trend_load(PGconn *c, const char *machine_id, const char *test_id, const char *variant_id,
	       const char *metric_id, size_t min_commits, const struct db_stmt *extra,
	       int nextra, struct trend_group *g, PGresult **failed);

/*
 * The sha, else the release, of the commits ids[0..n) into out (NULL for an
 * id with no commit), from the commit cache (trend_load's generation),
 * reading by id those it lacks: a trend's change points and decisions name
 * their commits this way instead of joining commits (a join PostgreSQL
 * planned anew at every request). The names live as long as g. 0, or -1
 * with *failed.
 */
int trend_commit_names(PGconn *c, struct trend_group *g, const long *ids, size_t n,
		       const char **out, PGresult **failed);

void trend_release(struct trend_group *g);

#endif
