/*
 * stats_lkp.h - LKP's comparison (specs/lkp-compare.md, `lkp ncompare`):
 * which stats changed by LKP's own rule, each row's mean, %change or absolute
 * change and "± N%" column in LKP's (Ruby's) number formats, the row order,
 * and the text of one comparison block. Pure: per-run values in, text out.
 * "Runs" are one value per run (the mean of that run's iterations).
 * stats_lkp.c holds the rule and rows, stats_lkp_text.c the text.
 */
#ifndef KPERF_STATS_LKP_H
#define KPERF_STATS_LKP_H

#include <stddef.h>

/* Columns of one block: the base and up to 8 targets. */
#define LKP_MAX_COLUMNS 9
/* LKP compares nothing unless one side has at least this many runs. */
#define LKP_MIN_RUNS 3

/* 1 for stats whose change is shown as A - B: perf-profile* and names ending
 * in '%'; else 0. */
int lkp_is_absolute(const char *name);

/* 1 for failure stats (dmesg.*, last_state.*, *.fail), shown as fails:runs. */
int lkp_is_failure(const char *name);

/*
 * 1 when the stat is a benchmark's own output: its program (the part before
 * the first '.') equals suite (may be NULL) or is a known benchmark
 * (vm-scalability, will-it-scale, memtier, ycsb, sysbench, ...).
 */
int lkp_is_benchmark(const char *name, const char *suite);

/*
 * 1 for LKP's "performance metrics", which pass the small-change filter at
 * a 1% change instead of 5%: benchmark outputs, proc-vmstat.*, perf-stat.*,
 * iostat.*, vmstat.{cpu,io,swap,system}.*, names matching (^|\.)time\. and
 * ^lock_stat\..*\.contentions.
 */
int lkp_is_perf_metric(const char *name, const char *suite);

/* One side's runs after LKP's trimming: sorted, floor(n/32) (at most 3)
 * dropped from each end; median is the upper one (index n/2 of the rest). */
struct lkp_range {
	size_t n; /* runs left after trimming */
	double min, median, max;
};

/* Returns 0 and fills *out, or -1 when n == 0, a pointer is NULL or memory
 * runs out. runs is not modified. */
int lkp_range(const double *runs, size_t n, struct lkp_range *out);

/*
 * LKP's changed-stat test of one stat, target (A) against base (B).
 * base/target hold the stat's per-run values; a side with fewer values than
 * its run count (base_runs, target_runs) is padded with zeros, a side with
 * none (n == 0) means the stat is absent there (rule 6 of the spec).
 * Failure stats (lkp_is_failure) are changed iff their maxima differ.
 * Returns 1 (changed: the stat gets a row), 0, or -1 on bad input or out of
 * memory. Requires name != NULL; suite may be NULL.
 */
int lkp_changed(const char *name, const char *suite,
		const double *base, size_t nbase, size_t base_runs,
		const double *target, size_t ntarget, size_t target_runs);

/*
 * Ruby's "%.<prec>f": like C's, except that a value whose shortest decimal
 * spelling is exactly half-way rounds half to even (0.665 -> "0.66",
 * 200.575 -> "200.58", 2.695 -> "2.70"). Writes at most cap bytes, always
 * NUL-terminated when cap > 0; returns the full length (>= cap: cut), or -1
 * on a bad argument. NaN/Inf print as "NaN"/"Inf"/"-Inf".
 */
int lkp_format_fixed(char *buf, size_t cap, double v, int prec);

/* The value column, 10 wide: "%10.2f" when |v| < 1000, "%10.4g" when
 * |v| > 1e8, else the integer part "%10d". Same return as lkp_format_fixed. */
int lkp_format_value(char *buf, size_t cap, double v);

/* The change column, 11 wide: "%+10.1f%%" ("%+10.2g%%" when |change| >=
 * 100000), or for an absolute row "%+10.1f" and a blank. */
int lkp_format_change(char *buf, size_t cap, double change, int absolute);

/* The " ±%3d%%" column, 6 wide (7 bytes: '±' is UTF-8); six blanks when
 * stddev_pct is NaN (a single run) or <= 2. */
int lkp_format_stddev(char *buf, size_t cap, double stddev_pct);

/* The numbers of one printed row. */
struct lkp_row {
	const char *name;      /* borrowed from the caller */
	int failure;           /* printed in the fail:runs section */
	int absolute;          /* change is A - B, not percent */
	size_t ncols;          /* 1 + number of targets */
	double mean[LKP_MAX_COLUMNS];       /* 0 for a column without values */
	double stddev_pct[LKP_MAX_COLUMNS]; /* population stddev * 100 / mean;
					     * NaN for fewer than 2 values */
	double change[LKP_MAX_COLUMNS];     /* [c] vs [0]; change[0] = 0 */
	double fails[LKP_MAX_COLUMNS];      /* failure rows: sum of the values */
	size_t runs[LKP_MAX_COLUMNS];       /* failure rows: runs of the column */
};

/*
 * Computes a row from per-column values (values[c] has nvalues[c] entries,
 * runs[c] is the column's run count, used by failure rows). Mean with
 * compensated summation; %change = 100 (A - B) / B with a zero B replaced by
 * 1e-100; failure change = 100 (fails[c] / runs[c - 1] - fails[0] / runs[0])
 * as LKP computes it. Returns 0, or -1 on bad input (ncols 0 or too large).
 */
int lkp_row_compute(struct lkp_row *row, const char *name, size_t ncols,
		    const double *const *values, const size_t *nvalues,
		    const size_t *runs);

/*
 * Formats a row with its newline:
 * perf: <value><±> then per target <change><' '><value><±>, "  <name>\n";
 * failure: "%11d" fails (blanks for 0) ":%-4d" runs, per target first
 * "%10.0f%% ". Same return as lkp_format_fixed.
 */
int lkp_row_format(const struct lkp_row *row, char *buf, size_t cap);

/*
 * Sorts rows as LKP does: benchmark stats first, then monitor groups (the
 * part before the first '.') with fewer rows first, equal-sized groups
 * interleaved by full name; perf-profile rows keyed by their first two name
 * parts, then by change (most negative first). O(n log n).
 * Returns 0, or -1 (rows untouched) when rows is NULL or memory runs out.
 */
int lkp_rows_sort(struct lkp_row *rows, size_t n, const char *suite);

/* A compared kernel: its full sha (or REF), and its subject when known. */
struct lkp_kernel {
	const char *sha;
	const char *subject; /* NULL: the commit line shows the full sha */
};

/* One stat: per column (base first) the per-run values. */
struct lkp_stat {
	const char *name;
	const double *const *values; /* [ncols]; an entry may be NULL if n is 0 */
	const size_t *nvalues;       /* [ncols]; 0: absent on that side */
	int always;                  /* a row whatever LKP's rule says (a benchmark KPI) */
};

/* One block: a (machine, test, variant) both sides ran. */
struct lkp_block {
	size_t naxes;                    /* params, variant knobs, tbox_group, testcase */
	const char *const *axis_keys;    /* any order: printed sorted by key */
	const char *const *axis_values;
	size_t ncols;                    /* 2..LKP_MAX_COLUMNS */
	const struct lkp_kernel *kernels;/* [ncols], base first */
	const size_t *runs;              /* [ncols] complete runs of each side */
	const char *suite;               /* the testcase; may be NULL */
	size_t nstats;
	const struct lkp_stat *stats;
};

/*
 * Renders the block as `lkp ncompare` prints it: the ==== line, the axes, the
 * commit lines, the column titles, the fail:runs section (if any), the
 * %stddev section, a blank line. Only stats that changed against the base in
 * some target (lkp_changed) get a row, and those marked always; when none
 * does the text is empty (""). With fewer than 3 runs on every side LKP's
 * rule judges nothing: only the always rows are shown.
 * Returns 0 and sets *out to a NUL-terminated string the caller must free()
 * (and *len, if not NULL, to its length); -1 on bad input or out of memory,
 * with *out set to NULL.
 */
int lkp_render(const struct lkp_block *b, char **out, size_t *len);

#endif
