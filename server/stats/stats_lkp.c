/*
 * stats_lkp.c - LKP's changed-stat rule, the numbers of a row and the row
 * order (see stats_lkp.h). The rule follows lkp-tests' lib/stats.rb as
 * specs/lkp-compare.md words it; stats_lkp_text.c prints what this decides.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server/stats/stats.h"
#include "server/stats/stats_lkp.h"
#include "lib/banned.h"

#define LKP_MARGIN_SHIFT 5 /* drop n >> 5 runs from each end ... */
#define LKP_MAX_MARGIN 3   /* ... but at most 3 */
#define LKP_MAX_RATIO 5.0
#define LKP_ZERO_BASE 1e-100
#define LKP_PERF_PROFILE_MIN 5.0 /* a perf-profile stat gone in A shows above this */

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

static int is_perf_profile(const char *name)
{
	return starts_with(name, "perf-profile.");
}

int lkp_is_absolute(const char *name)
{
	return starts_with(name, "perf-profile") || ends_with(name, "%");
}

int lkp_is_failure(const char *name)
{
	return starts_with(name, "dmesg.") || starts_with(name, "last_state.") ||
	       ends_with(name, ".fail");
}

/* benchmarks whose outputs LKP (and kperf's collectors) know by name */
static const char *const benchmarks[] = {
	"aim7", "aim9", "blogbench", "dbench", "ebizzy", "fio-basic", "fsmark",
	"hackbench", "iperf", "kbuild", "memtier", "netperf", "pbzip2", "pgbench",
	"phoronix-test-suite", "pigz", "readtwice", "reaim", "redis", "sockperf",
	"stream", "stress-ng", "sysbench", "unixbench", "vm-scalability",
	"will-it-scale", "ycsb",
};

static int program_is(const char *name, const char *prog)
{
	size_t l = strlen(prog);

	return strncmp(name, prog, l) == 0 && (name[l] == '.' || name[l] == '\0');
}

int lkp_is_benchmark(const char *name, const char *suite)
{
	if (suite != NULL && *suite != '\0' && program_is(name, suite))
		return 1;
	for (size_t i = 0; i < sizeof(benchmarks) / sizeof(benchmarks[0]); i++)
		if (program_is(name, benchmarks[i]))
			return 1;
	return 0;
}

int lkp_is_perf_metric(const char *name, const char *suite)
{
	if (lkp_is_benchmark(name, suite))
		return 1;
	if (starts_with(name, "proc-vmstat.") || starts_with(name, "perf-stat.") ||
	    starts_with(name, "iostat.") || starts_with(name, "vmstat.cpu.") ||
	    starts_with(name, "vmstat.io.") || starts_with(name, "vmstat.swap.") ||
	    starts_with(name, "vmstat.system."))
		return 1;
	if (starts_with(name, "time.") || strstr(name, ".time.") != NULL)
		return 1;
	return starts_with(name, "lock_stat.") &&
	       strstr(name + strlen("lock_stat."), ".contentions") != NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int lkp_range(const double *runs, size_t n, struct lkp_range *out)
{
	double *v;
	size_t margin;

	if (runs == NULL || out == NULL || n == 0)
		return -1;
	v = malloc(n * sizeof(*v));
	if (v == NULL)
		return -1;
	memcpy(v, runs, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_double);
	margin = n >> LKP_MARGIN_SHIFT;
	if (margin > LKP_MAX_MARGIN)
		margin = LKP_MAX_MARGIN;
	out->n = n - 2 * margin;
	out->min = v[margin];
	out->median = v[margin + out->n / 2];
	out->max = v[n - margin - 1];
	free(v);
	return 0;
}

/* per-metric floors (spec rule 5); the first pattern that matches decides */
static int passes_floor(const char *name, double max, double delta)
{
	const char *vm = strstr(name, "vmstat");

	if (vm != NULL && strstr(vm + strlen("vmstat"), "nr_") != NULL)
		return max >= 100;
	if (strstr(name, ".time.elapsed_time") != NULL)
		return max >= 10 && delta >= 5;
	if (starts_with(name, "proc-vmstat.") || strstr(name, "meminfo") != NULL)
		return max > 1000;
	if (starts_with(name, "lock_stat."))
		return strstr(name, "time") != NULL ? delta > 1000 : delta > 10000;
	if (starts_with(name, "interrupts.") || starts_with(name, "softirqs."))
		return max > 10000;
	return 1;
}

/* the side's values padded with zeros to its run count (LKP's matrix);
 * len = max(n, runs) >= 1 */
static double *padded(const double *v, size_t n, size_t len)
{
	double *p = calloc(len, sizeof(*p));

	if (p != NULL && n > 0)
		memcpy(p, v, n * sizeof(*p));
	return p;
}

static int changed_ranges(const char *name, const char *suite, const struct lkp_range *a,
			  const struct lkp_range *b)
{
	const struct lkp_range *hi, *lo;
	double ratio, delta, max;

	/* rule 3: the ranges must not overlap in LKP's sense */
	if (!((a->min > b->median && a->median > b->max) ||
	      (b->min > a->median && b->median > a->max)))
		return 0;
	if (is_perf_profile(name))
		return 1; /* rule 7 */

	/* rule 4: small-change filter */
	hi = a->median > b->median ? a : b;
	lo = hi == a ? b : a;
	ratio = lo->median > 0.0 ? hi->median / lo->median : LKP_MAX_RATIO;
	if (ratio > LKP_MAX_RATIO)
		ratio = LKP_MAX_RATIO;
	if (!(ratio > 1.01))
		return 0;
	if (!(ratio > 1.05) && !lkp_is_perf_metric(name, suite))
		return 0;

	/* rule 5: floors */
	delta = hi->median - lo->median;
	max = a->max > b->max ? a->max : b->max;
	return passes_floor(name, max, delta);
}

int lkp_changed(const char *name, const char *suite,
		const double *base, size_t nbase, size_t base_runs,
		const double *target, size_t ntarget, size_t target_runs)
{
	double *pb = NULL, *pa = NULL;
	size_t nb = 0, na = 0;
	struct lkp_range rb, ra;
	int failure, ret = -1;

	if (name == NULL || (nbase > 0 && base == NULL) || (ntarget > 0 && target == NULL))
		return -1;
	/* rule 1: nothing is compared unless one side has 3 runs */
	if (base_runs < LKP_MIN_RUNS && target_runs < LKP_MIN_RUNS)
		return 0;
	failure = lkp_is_failure(name);
	/* rule 6: one-sided stats */
	if (nbase == 0 && ntarget == 0)
		return 0;
	if (nbase == 0 && !failure && !is_perf_profile(name) &&
	    !starts_with(name, "lock_stat."))
		return 0;

	nb = nbase > base_runs ? nbase : base_runs;
	na = ntarget > target_runs ? ntarget : target_runs;
	if (nb == 0 || na == 0)
		return 0; /* a side without runs has nothing to compare */
	pb = padded(base, nbase, nb);
	pa = padded(target, ntarget, na);
	if (pb == NULL || pa == NULL)
		goto out;

	if (failure) {
		/* function stats: no trimming, changed when the maxima differ */
		ret = stats_max(pa, na) != stats_max(pb, nb);
		goto out;
	}
	if (lkp_range(pb, nb, &rb) < 0 || lkp_range(pa, na, &ra) < 0)
		goto out;
	ret = changed_ranges(name, suite, &ra, &rb);
	if (ret == 1 && ntarget == 0 && is_perf_profile(name) &&
	    !(rb.median > LKP_PERF_PROFILE_MIN))
		ret = 0;
out:
	free(pa);
	free(pb);
	return ret;
}

/* ---- rows ---------------------------------------------------------------- */

int lkp_row_compute(struct lkp_row *row, const char *name, size_t ncols,
		    const double *const *values, const size_t *nvalues,
		    const size_t *runs)
{
	double base;

	if (row == NULL || name == NULL || values == NULL || nvalues == NULL ||
	    ncols == 0 || ncols > LKP_MAX_COLUMNS)
		return -1;
	memset(row, 0, sizeof(*row));
	row->name = name;
	row->ncols = ncols;
	row->failure = lkp_is_failure(name);
	row->absolute = lkp_is_absolute(name);
	for (size_t c = 0; c < ncols; c++) {
		size_t n = nvalues[c];

		if (n > 0 && values[c] == NULL)
			return -1;
		row->runs[c] = runs != NULL ? runs[c] : n;
		row->fails[c] = n > 0 ? stats_sum(values[c], n) : 0.0;
		row->mean[c] = n > 0 ? stats_mean(values[c], n) : 0.0;
		row->stddev_pct[c] = NAN;
		if (n > 1) {
			double sd = stats_pstddev(values[c], n);

			row->stddev_pct[c] = row->mean[c] != 0.0 ? 100.0 * sd / row->mean[c] : sd;
		}
	}
	if (row->failure) {
		double r0 = row->runs[0] ? (double)row->runs[0] : 1.0;

		for (size_t c = 1; c < ncols; c++) {
			double rc = row->runs[c - 1] ? (double)row->runs[c - 1] : 1.0;

			row->change[c] = 100.0 * (row->fails[c] / rc - row->fails[0] / r0);
		}
		return 0;
	}
	base = row->mean[0];
	for (size_t c = 1; c < ncols; c++) {
		if (row->absolute) {
			row->change[c] = row->mean[c] - base;
		} else {
			double b = base == 0.0 ? LKP_ZERO_BASE : base;

			row->change[c] = 100.0 * (row->mean[c] - b) / b;
		}
	}
	return 0;
}

/* ---- order ----------------------------------------------------------------- */

struct sort_ctx_row {
	struct lkp_row row;
	size_t weight;   /* 0 for benchmark stats, else the size of its group */
	size_t keylen;   /* compared prefix of the name */
};

static size_t base_len(const char *name)
{
	const char *dot = strchr(name, '.');

	return dot ? (size_t)(dot - name) : strlen(name);
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct sort_ctx_row *a = pa, *b = pb;
	size_t l;
	int c;

	if (a->weight != b->weight)
		return a->weight < b->weight ? -1 : 1;
	l = a->keylen < b->keylen ? a->keylen : b->keylen;
	c = memcmp(a->row.name, b->row.name, l);
	if (c == 0 && a->keylen != b->keylen)
		c = a->keylen < b->keylen ? -1 : 1;
	if (c != 0)
		return c;
	for (size_t i = 1; i < a->row.ncols && i < b->row.ncols; i++)
		if (a->row.change[i] != b->row.change[i])
			return a->row.change[i] < b->row.change[i] ? -1 : 1;
	return strcmp(a->row.name, b->row.name);
}

/* length of the first two dot-separated parts of a perf-profile name */
static size_t two_parts(const char *name)
{
	const char *d1 = strchr(name, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;

	return d2 ? (size_t)(d2 - name) : strlen(name);
}

/* orders by the group (the name up to its first '.'), then by name */
static int cmp_group(const void *pa, const void *pb)
{
	const struct sort_ctx_row *a = pa, *b = pb;
	size_t la = base_len(a->row.name), lb = base_len(b->row.name);
	int c = memcmp(a->row.name, b->row.name, la < lb ? la : lb);

	if (c == 0 && la != lb)
		c = la < lb ? -1 : 1;
	return c ? c : strcmp(a->row.name, b->row.name);
}

int lkp_rows_sort(struct lkp_row *rows, size_t n, const char *suite)
{
	struct sort_ctx_row *s;

	if (n < 2)
		return 0;
	if (rows == NULL)
		return -1;
	s = malloc(n * sizeof(*s));
	if (s == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		s[i].row = rows[i];
		s[i].keylen = is_perf_profile(rows[i].name) ? two_parts(rows[i].name)
							    : strlen(rows[i].name);
	}
	/* group sizes: one pass over the rows ordered by group */
	qsort(s, n, sizeof(*s), cmp_group);
	for (size_t i = 0, j; i < n; i = j) {
		size_t bl = base_len(s[i].row.name);

		for (j = i + 1; j < n && base_len(s[j].row.name) == bl &&
				memcmp(s[j].row.name, s[i].row.name, bl) == 0;)
			j++;
		for (size_t k = i; k < j; k++)
			s[k].weight = lkp_is_benchmark(s[k].row.name, suite) ? 0 : j - i;
	}
	qsort(s, n, sizeof(*s), cmp_rows);
	for (size_t i = 0; i < n; i++)
		rows[i] = s[i].row;
	free(s);
	return 0;
}
