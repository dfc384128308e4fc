/*
 * stats.h - descriptive statistics and Welch's two-sample t-test on plain
 * arrays of doubles. Pure functions (no I/O, no database, no global state):
 * the compare and regression code feeds them pooled samples and renders what
 * they return. Quantiles and tail probabilities come from GSL.
 */
#ifndef KPERF_STATS_H
#define KPERF_STATS_H

#include <stddef.h>

/*
 * Turns GSL's default error handler (which aborts the process) off, so that a
 * GSL routine given a value it cannot handle returns NaN instead. Call once at
 * start-up, before threads start; the functions below validate their input
 * and never rely on it, it is a second line of defence.
 */
void stats_init(void);

/*
 * Sum of x[0..n) with compensated (Kahan-Babuska/Neumaier) summation.
 * Returns 0 for n == 0. Requires x != NULL when n > 0.
 */
double stats_sum(const double *x, size_t n);

/* Smallest / largest of x[0..n); NaN when n == 0. */
double stats_min(const double *x, size_t n);
double stats_max(const double *x, size_t n);

/* Arithmetic mean (compensated sum / n); NaN when n == 0. */
double stats_mean(const double *x, size_t n);

/* Harmonic mean n / sum(1/x); NaN when n == 0 or any x <= 0. */
double stats_hmean(const double *x, size_t n);

/* Geometric mean exp(mean(log x)); NaN when n == 0 or any x <= 0. */
double stats_gmean(const double *x, size_t n);

/*
 * Median: the middle value of the sorted data, the mean of the two middle
 * values when n is even (R's median()). x is not modified.
 * Returns 0 and sets *out, or -1 when n == 0 or out of memory.
 */
int stats_median(const double *x, size_t n, double *out);

/* Sample standard deviation (divisor n - 1, two-pass); NaN when n < 2. */
double stats_stddev(const double *x, size_t n);

/* Population standard deviation (divisor n, two-pass); NaN when n == 0. */
double stats_pstddev(const double *x, size_t n);

/*
 * Coefficient of variation in percent: sample stddev * 100 / mean.
 * NaN when n < 2 or the mean is 0.
 */
double stats_cv(const double *x, size_t n);

/* Everything above for one sample set. */
struct stats_desc {
	size_t n;
	double min;
	double max;
	double mean;    /* arithmetic */
	double hmean;   /* NaN when any x <= 0 */
	double gmean;   /* NaN when any x <= 0 */
	double median;
	double stddev;  /* sample (n - 1); NaN when n < 2 */
	double pstddev; /* population (n) */
	double cv;      /* percent; NaN when n < 2 or mean == 0 */
};

/*
 * Fills *out for x[0..n). Returns 0, or -1 when n == 0, x or out is NULL,
 * a value is not finite, or memory runs out (*out is then unspecified).
 */
int stats_describe(const double *x, size_t n, struct stats_desc *out);

/*
 * What an archived month keeps of one run's values of one metric
 * (sample_summary, migration 015), and what the summaries of several runs
 * add up to: the count, the mean, the sum of squared deviations from it,
 * the extremes and the sum of reciprocals. Enough for the mean, the
 * standard deviation, Min, Max, the harmonic mean and Welch's test of a
 * union of runs; not for a median or mmtests' B?mean rows (which need the
 * values in order: absent for archived runs).
 */
struct stats_moments {
	size_t n;
	double mean;
	double m2;   /* sum of (x - mean)^2 */
	double min, max;
	double rsum; /* sum of 1/x; NaN when some x <= 0 (no harmonic mean) */
};

/* The moments of x[0..n) (all zero, rsum 0, when n == 0). */
void stats_moments_of(const double *x, size_t n, struct stats_moments *out);
/* Adds b's values to a (Chan, Golub and LeVeque's pairwise update). */
void stats_moments_merge(struct stats_moments *a, const struct stats_moments *b);
/* Sample standard deviation (n - 1); NaN when n < 2. */
double stats_moments_stddev(const struct stats_moments *m);
/* Coefficient of variation in percent; NaN when n < 2 or the mean is 0. */
double stats_moments_cv(const struct stats_moments *m);
/* Harmonic mean; NaN when n == 0 or some x <= 0. */
double stats_moments_hmean(const struct stats_moments *m);
/* Welch's test as stats_welch, from two sides' moments. */
struct stats_welch;
int stats_welch_moments(const struct stats_moments *base, const struct stats_moments *target,
			double level, struct stats_welch *out);

/*
 * Two-sided p-value of a Student t statistic: 2 * P(T_df > |t|).
 * df may be fractional. NaN when t is NaN or df <= 0 or not finite.
 */
double stats_t_pvalue(double t, double df);

/* Result of stats_welch(): target compared with base. */
struct stats_welch {
	size_t n_base, n_target;
	double mean_base, mean_target;
	double diff;      /* mean_target - mean_base */
	double se;        /* sqrt(var_b/n_b + var_t/n_t) */
	double t;         /* diff / se (R's t.test(base, target) prints -t) */
	double df;        /* Welch-Satterthwaite */
	double p;         /* two-sided */
	double level;     /* confidence level, e.g. 0.95 */
	double ci_lo;     /* CI of diff: R's t.test(base, target) gives -ci_hi */
	double ci_hi;     /* and -ci_lo */
	double ci_lo_pct; /* ci_lo * 100 / mean_base; NaN when mean_base == 0 */
	double ci_hi_pct;
};

/*
 * Welch's unequal-variance t-test of target against base, as R's
 * t.test(base, target, conf.level = level) computes it, with the sign turned
 * so that a positive diff means target > base.
 * Requires nb >= 2, nt >= 2, finite values and 0 < level < 1.
 * Returns 0 and fills *out; -1 on bad input or when both samples are
 * essentially constant (R's "data are essentially constant" error).
 */
int stats_welch(const double *base, size_t nb, const double *target, size_t nt,
		double level, struct stats_welch *out);

#endif
