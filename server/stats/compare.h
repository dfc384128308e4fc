/*
 * compare.h - the comparison of kernels over trend keys: samples of each
 * side grouped by (machine, suite, params, variant, metric), then per key
 * and target the numbers of a compare row (descriptive stats, Welch CI,
 * LKP's changed flag) and kperf's verdict. Pure: the caller loads samples.
 */
#ifndef KPERF_COMPARE_H
#define KPERF_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "server/stats/direction.h"
#include "server/stats/stats.h"

#define COMPARE_SIDES_MAX 9 /* the base and up to 8 targets */

/* One side's samples of one key. */
struct cmp_cell {
	double *samples; /* every value of every run, pooled */
	size_t n, cap;
	double *run_means; /* one value per run, as LKP's matrix has */
	size_t nruns, runcap;
	/* archived runs (their values gone, summaries kept), NULL when none
	 * (a pointer: 9 cells a key, 5,000 keys a compare): joined here, their
	 * means in run_means; figures that need the values (median, B?mean,
	 * the list of samples) are absent when arch is set */
	struct stats_moments *arch;
};

/* Samples of a cell, archived ones included. */
static inline size_t cmp_cell_count(const struct cmp_cell *c)
{
	return c->n + (c->arch ? c->arch->n : 0);
}

/* The (machine, suite, params, variant) of keys, held once per set. */
struct cmp_prefix {
	char *machine, *suite, *params, *variant; /* params/variant: JSON text */
	uint64_t hash;                            /* of the four, continued by each metric */
};

struct cmp_key {
	const char *machine, *suite, *params, *variant; /* the prefix's */
	char *metric;
	const struct cmp_prefix *prefix;
	uint64_t hash;
	enum direction direction;
	struct cmp_cell cell[COMPARE_SIDES_MAX];
};

/* A metric the sides met, with its directions. */
struct cmp_metric {
	long id;
	const char *name;         /* kept process-wide (compare_load.c), else owned */
	int owned;                /* name is the set's to free */
	enum direction by_name;   /* what its name implies (direction_of_name) */
	enum direction direction; /* metric.direction, else by_name: unless a run says */
};

struct cmp_set {
	size_t nsides; /* 1 + targets */
	struct cmp_key **keys;
	size_t nkeys, cap;
	size_t *buckets; /* open addressing over keys, index + 1 */
	size_t nbuckets;
	struct cmp_metric *metrics; /* by id; read once for all sides */
	size_t nmetrics;
	struct cmp_prefix **prefixes;
	size_t nprefixes;
};

enum verdict { VERDICT_NOISE, VERDICT_CHANGED, VERDICT_IMPROVEMENT, VERDICT_REGRESSION };

/* Side summary in a row. */
struct cmp_side {
	size_t n;
	double mean, stddev_pct, min, max;
};

/* One compare row: key k, target t (1..nsides-1) against the base. */
struct cmp_row {
	const struct cmp_key *key;
	int target;
	struct cmp_side base, tgt;
	double change_pct, change_abs;
	int absolute;     /* LKP shows the change as A - B (perf-profile.*, *%) */
	int welch_ok;     /* both sides have >= 2 samples and are not constant */
	struct stats_welch welch;
	int lkp_changed;  /* LKP's rule on per-run means: 1, 0 */
	enum verdict verdict;
};

void cmp_set_init(struct cmp_set *s, size_t nsides);
void cmp_set_release(struct cmp_set *s);

/*
 * The key for these fields, created empty when new (strings are copied).
 * direction applies when the key is new or had none.
 */
struct cmp_key *cmp_set_key(struct cmp_set *s, const char *machine, const char *suite,
			    const char *params, const char *variant, const char *metric,
			    enum direction direction);
/* The same in two steps, for many metrics of one prefix: the prefix of the
 * four fields (made when new), then the key of a metric within it. */
const struct cmp_prefix *cmp_set_prefix(struct cmp_set *s, const char *machine,
					const char *suite, const char *params, const char *variant);
struct cmp_key *cmp_set_key_in(struct cmp_set *s, const struct cmp_prefix *p, const char *metric,
			       enum direction direction);

/* Add one run's values of a key to a side. */
void cmp_cell_add_run(struct cmp_cell *c, const double *values, size_t n);
/* Add one archived run's summary of a key to a side. */
void cmp_cell_add_summary(struct cmp_cell *c, const struct stats_moments *m);
/* All of a cell's values as moments (samples and archived runs). */
void cmp_cell_moments(const struct cmp_cell *c, struct stats_moments *out);

/* Sort keys by (machine, suite, params, variant, metric). */
void cmp_set_sort(struct cmp_set *s);

/*
 * Compute the row of key k, target t. Returns 0, or -1 when either side has
 * no samples of the key (no row).
 */
int cmp_row_compute(const struct cmp_key *k, int t, struct cmp_row *row);

/* kperf's verdict for computed numbers (also used by cmp_row_compute). */
enum verdict cmp_verdict(const struct cmp_row *row, enum direction d);

const char *verdict_name(enum verdict v);

#endif
