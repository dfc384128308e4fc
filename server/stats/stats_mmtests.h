/*
 * stats_mmtests.h - mmtests' compare-kernels table (specs/mmtests-compare.md):
 * per operand and kernel the Min, Hmean|Amean, Stddev, CoeffVar, Max and
 * B?mean-N rows, their percent-of-baseline rules, the `*` significance mark,
 * and the text of one table. Pure: plain C arrays in, a malloc'd string out.
 */
#ifndef KPERF_STATS_MMTESTS_H
#define KPERF_STATS_MMTESTS_H

#include <stddef.h>

#include "server/stats/stats.h"

/* Which way is better: decides Hmean vs Amean, sort order and percent rule. */
enum mmtests_dir {
	MMTESTS_HIGHER = 0, /* higher is better: Hmean, BHmean-N */
	MMTESTS_LOWER = 1,  /* lower is better: Amean, BAmean-N */
};

/* The rows of a table, in print order. */
enum mmtests_stat {
	MMTESTS_MIN,
	MMTESTS_MEAN, /* Hmean or Amean */
	MMTESTS_STDDEV,
	MMTESTS_COEFFVAR,
	MMTESTS_MAX,
	MMTESTS_BMEAN50,
	MMTESTS_BMEAN95,
	MMTESTS_BMEAN99,
	MMTESTS_NSTATS
};

/* The numbers of one (operand, kernel) cell. */
struct mmtests_summary {
	size_t n;
	double min, max;
	double amean;       /* arithmetic mean, always */
	double stddev;      /* sample (n - 1) around amean; 0 when n <= 1 */
	double coeffvar;    /* stddev * 100 / amean; 0 when amean == 0 */
	/* indexed by enum mmtests_stat; a headline or B?mean that is an
	 * invalid Hmean (some x <= 0) is 0 here and 0 in valid[] */
	double value[MMTESTS_NSTATS];
	int valid[MMTESTS_NSTATS];
	int partial; /* from moments (archived runs): the B?mean rows are absent */
};

/*
 * Summarizes x[0..n) the mmtests way: samples sorted best-first (descending
 * for MMTESTS_HIGHER, ascending for MMTESTS_LOWER), sums taken in that order.
 * Returns 0, or -1 when n == 0, a pointer is NULL, a value is not finite or
 * memory runs out. x is not modified.
 */
int mmtests_summarize(const double *x, size_t n, enum mmtests_dir dir,
		      struct mmtests_summary *out);

/*
 * The same from moments (runs of archived months: their values are gone):
 * Min, the headline mean (Hmean from the sum of reciprocals), Stddev,
 * CoeffVar and Max; the B?mean rows need the values in order, so they are
 * absent (partial = 1, printed as NaN). 0, or -1 when m->n == 0.
 */
int mmtests_summarize_moments(const struct stats_moments *m, enum mmtests_dir dir,
			      struct mmtests_summary *out);

/*
 * Row title: "Min", "Hmean"/"Amean", "Stddev", "CoeffVar", "Max",
 * "BHmean-50"/"BAmean-50", ... A static string; "" for an unknown stat.
 */
const char *mmtests_stat_name(enum mmtests_stat stat, enum mmtests_dir dir);

/*
 * Percent of this kernel's value a against the baseline's b, positive
 * meaning better (mmtests' pdiff for Min, mean, Max and B?mean of a
 * higher-is-better metric; pndiff for those of a lower-is-better metric and
 * for Stddev and CoeffVar always).
 */
double mmtests_pct(enum mmtests_stat stat, enum mmtests_dir dir, double a, double b);

/*
 * 1 when the headline means of base and a differ significantly (p < 0.10 of
 * a t statistic on the headline means, sample stddevs and df = n_b + n_a - 2;
 * with zero spread on both sides, whenever the means differ), else 0.
 * An invalid Hmean on either side is never significant.
 */
int mmtests_significant(const struct mmtests_summary *base,
			const struct mmtests_summary *a);

/*
 * Formats one row into buf (always NUL-terminated when cap > 0):
 * "%-W1s %-W2s" then per kernel "%12.2f" and " (%7.2f%%)", or " *%7.2f%%*"
 * when star[k]; no trailing blank, no newline. A NaN value prints as "NaN".
 * Returns the length of the full row (as snprintf does: a result >= cap means
 * it was cut), or -1 on a NULL argument or a negative width.
 */
int mmtests_format_row(char *buf, size_t cap, const char *stat, int w1,
		       const char *operand, int w2, size_t nkernels,
		       const double *value, const double *pct, const int *star);

/*
 * Splits a kernel name for the two-line header: *head_len is the length of
 * the part shown on line 1, and *tail the part shown on line 2 (pointing
 * into name, possibly ""). See the spec: split at the first '-', moved 4 on
 * when the text there is "-rc<digit>"; the character at the split is not
 * shown. A name without '-' is all on line 1.
 */
void mmtests_split_name(const char *name, size_t *head_len, const char **tail);

/*
 * The operand shown for runs that have no operand param: the metric name's
 * part after its last '.', pointing into metric (metric itself if no dot).
 */
const char *mmtests_default_operand(const char *metric);

/* One table: one metric, several operands, several kernels. */
struct mmtests_table {
	const char *title;             /* "<suite> <metric>", or NULL: no title */
	enum mmtests_dir dir;
	size_t nkernels;               /* >= 1; [0] is the baseline */
	const char *const *kernels;    /* names as the REFs were given */
	size_t noperands;              /* >= 1 */
	const char *const *operands;   /* e.g. "1", "4", "18"; any order */
	/* samples of operand o and kernel k: samples[o * nkernels + k], with
	 * nsamples[...] values; 0 values print the cell as NaN */
	const double *const *samples;
	const size_t *nsamples;
	/* NULL, or per cell (same index) NULL or the archived runs' moments,
	 * joined to that cell's samples */
	const struct stats_moments *const *archived;
};

/*
 * Renders the table: an optional title line and a blank line, the two-line
 * header, then all rows grouped by statistic (outer) and operand in numeric
 * order (inner), each line ending in '\n'.
 * Returns 0 and sets *out to a NUL-terminated string the caller must free()
 * (and *len, if len is not NULL, to its length); -1 on bad input (no kernels
 * or operands, a NULL array) or out of memory, with *out set to NULL.
 */
int mmtests_render(const struct mmtests_table *t, char **out, size_t *len);

#endif
