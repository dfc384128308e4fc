/*
 * regress_load.h - what the decision worker reads of the key groups
 * (machine, test, variant) of one batch, a few statements for all of them:
 * each group's valid runs, their commits in commit order (as trends order
 * them), and every sample, by metric and run. The decisions, the history
 * noise and the change points of a group are all computed from this one
 * read.
 */
#ifndef KPERF_REGRESS_LOAD_H
#define KPERF_REGRESS_LOAD_H

#include <jansson.h>
#include <libpq-fe.h>
#include <stddef.h>
#include <stdint.h>

#include "server/reads/commit_cache.h"
#include "server/stats/direction.h"
#include "server/stats/stats.h"

struct rl_run {
	long id, commit;
	int64_t received;  /* received_at, PostgreSQL microseconds */
	size_t commit_idx; /* its commit in the group's commits */
	json_t *dirs;      /* its "directions" once rl_samples read them, else NULL */
	int want_dirs;     /* set by the caller: read its "directions" */
	char *work;        /* its command's work arguments (command.h), or NULL */
};

/* One run's values of one metric, in iteration order; or, for a run of an
 * archived month (`kperfd archive`), its summary: n 0 and arch set. */
struct rl_seg {
	size_t run; /* index in the group's runs */
	size_t off, n; /* the group's vals[off .. off + n) */
	const struct stats_moments *arch; /* in the group's summaries, else NULL */
};

struct rl_metric {
	long id;
	const char *name; /* kept for the life of the process (or of the group) */
	enum direction by_name, direction; /* what the name says; metric.direction, else by_name */
	struct rl_seg *segs; /* in run id order */
	size_t nsegs;
};

struct rl_commit {
	long id;
	long last_run; /* its newest run's id: the history's order */
	size_t rank;   /* in commit order, 0 first */
	size_t nruns;
	const struct commit_info *info; /* from the batch's commit cache generation */
};

struct rl_group {
	long key_group, machine, test, variant;
	char ids[3][24];                          /* machine, test, variant as text */
	const char *mname, *suite, *params, *knobs; /* borrowed, set by the caller */
	struct rl_run *runs;                      /* valid runs, by id */
	size_t nruns;
	struct rl_commit *commits; /* commits of the runs, by id */
	size_t ncommits;
	struct rl_metric *metrics; /* by id, after rl_samples */
	size_t nmetrics;
	double *vals;
	struct stats_moments *summaries; /* of archived runs, the segments' arch */
	size_t nsummaries;
	char **owned_names; /* names the process-wide table had no room for */
	size_t nowned;
	int want_samples; /* set by the caller: rl_samples reads this group's */
};

/* The statements rl_runs reads: the commit epoch (binary), then the runs of
 * the key groups $1 (int[]) ordered by group and id, with their commands
 * (binary). */
extern const char RL_SQL_RUNS[];

/*
 * Spread the rows of RL_SQL_RUNS over groups[0..n) (sorted by key_group,
 * zeroed but for key_group and the ids), then give each its commits from
 * the cache generation gen, reading the ones it lacks, and their order.
 * Returns 0, or -1 with *failed set (the caller reports and PQclears it).
 */
int rl_runs(PGconn *c, struct commit_gen *gen, struct rl_group *groups, size_t n,
	    const PGresult *runs, PGresult **failed);

/*
 * Read the samples of those of groups[0..n) marked want_samples (by the
 * key-group index) and the summaries of their archived runs (sample_summary:
 * a segment each, n 0), the names of their metrics, and the "directions" of
 * their runs marked want_dirs. Returns 0, or -1 with *failed set.
 */
int rl_samples(PGconn *c, struct rl_group *groups, size_t n, PGresult **failed);

/* The index of commit id in g->commits, or (size_t)-1. */
size_t rl_commit_index(const struct rl_group *g, long id);

/* Free what rl_runs and rl_samples gave g (not the caller's strings). */
void rl_group_release(struct rl_group *g);

/* What to decide for the claimed entries: each commit and its children with
 * runs against their bases (parent, series base, nearest tested ancestor); see
 * regress_plan.c. $1-$4 the entries' commit, machine, test, variant, $5 their
 * key groups, $6 the ancestor depth. */
extern const char RL_SQL_PLAN[];

#endif
