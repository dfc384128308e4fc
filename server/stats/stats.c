/*
 * stats.c - descriptive statistics and Welch's t-test (see stats.h).
 * Sums are compensated so that a mean of ten 5-digit throughputs is exact to
 * the last bit R prints; the t distribution is GSL's, never an approximation
 * of our own.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>

#include "server/stats/stats.h"
#include "lib/banned.h"

void stats_init(void)
{
	gsl_set_error_handler_off();
}

double stats_sum(const double *x, size_t n)
{
	double sum = 0.0, comp = 0.0;

	for (size_t i = 0; i < n; i++) {
		double t = sum + x[i];

		/* Neumaier: keep the low-order bits of whichever addend lost them */
		if (fabs(sum) >= fabs(x[i]))
			comp += (sum - t) + x[i];
		else
			comp += (x[i] - t) + sum;
		sum = t;
	}
	return sum + comp;
}

double stats_min(const double *x, size_t n)
{
	double m;

	if (n == 0)
		return NAN;
	m = x[0];
	for (size_t i = 1; i < n; i++)
		if (x[i] < m)
			m = x[i];
	return m;
}

double stats_max(const double *x, size_t n)
{
	double m;

	if (n == 0)
		return NAN;
	m = x[0];
	for (size_t i = 1; i < n; i++)
		if (x[i] > m)
			m = x[i];
	return m;
}

double stats_mean(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	return stats_sum(x, n) / (double)n;
}

double stats_hmean(const double *x, size_t n)
{
	double sum = 0.0, comp = 0.0;

	if (n == 0)
		return NAN;
	for (size_t i = 0; i < n; i++) {
		double r, t;

		if (!(x[i] > 0.0))
			return NAN;
		r = 1.0 / x[i];
		t = sum + r;
		if (fabs(sum) >= fabs(r))
			comp += (sum - t) + r;
		else
			comp += (r - t) + sum;
		sum = t;
	}
	return (double)n / (sum + comp);
}

double stats_gmean(const double *x, size_t n)
{
	double sum = 0.0;

	if (n == 0)
		return NAN;
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] > 0.0))
			return NAN;
		sum += log(x[i]);
	}
	return exp(sum / (double)n);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int stats_median(const double *x, size_t n, double *out)
{
	double *v;

	if (n == 0 || x == NULL || out == NULL)
		return -1;
	v = malloc(n * sizeof(*v));
	if (v == NULL)
		return -1;
	memcpy(v, x, n * sizeof(*v));
	qsort(v, n, sizeof(*v), cmp_double);
	if (n % 2)
		*out = v[n / 2];
	else
		*out = (v[n / 2 - 1] + v[n / 2]) / 2.0;
	free(v);
	return 0;
}

/* Sum of squared deviations from the mean, two-pass (as R's var() does). */
static double sum_sq_dev(const double *x, size_t n, double mean)
{
	double sum = 0.0;

	for (size_t i = 0; i < n; i++) {
		double d = x[i] - mean;

		sum += d * d;
	}
	return sum;
}

double stats_stddev(const double *x, size_t n)
{
	if (n < 2)
		return NAN;
	return sqrt(sum_sq_dev(x, n, stats_mean(x, n)) / (double)(n - 1));
}

double stats_pstddev(const double *x, size_t n)
{
	if (n == 0)
		return NAN;
	return sqrt(sum_sq_dev(x, n, stats_mean(x, n)) / (double)n);
}

double stats_cv(const double *x, size_t n)
{
	double mean;

	if (n < 2)
		return NAN;
	mean = stats_mean(x, n);
	if (mean == 0.0)
		return NAN;
	return stats_stddev(x, n) * 100.0 / mean;
}

int stats_describe(const double *x, size_t n, struct stats_desc *out)
{
	if (x == NULL || out == NULL || n == 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return -1;
	out->n = n;
	if (stats_median(x, n, &out->median) < 0)
		return -1;
	out->min = stats_min(x, n);
	out->max = stats_max(x, n);
	out->mean = stats_mean(x, n);
	out->hmean = stats_hmean(x, n);
	out->gmean = stats_gmean(x, n);
	out->stddev = stats_stddev(x, n);
	out->pstddev = stats_pstddev(x, n);
	out->cv = stats_cv(x, n);
	return 0;
}

double stats_t_pvalue(double t, double df)
{
	double p;

	if (isnan(t) || !(df > 0.0) || !isfinite(df))
		return NAN;
	p = 2.0 * gsl_cdf_tdist_Q(fabs(t), df);
	return p > 1.0 ? 1.0 : p;
}

static int all_finite(const double *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

/* Welch's test from each side's size, mean and sample variance */
static int welch_core(size_t nb, double mb, double vb, size_t nt, double mt, double vt,
		      double level, struct stats_welch *out)
{
	double seb2, set2, se, df, q;

	seb2 = vb / (double)nb;
	set2 = vt / (double)nt;
	se = sqrt(seb2 + set2);
	/* R refuses the test here; a t of inf / 0 would be meaningless */
	if (se < 10.0 * DBL_EPSILON * fmax(fabs(mb), fabs(mt)) || se == 0.0)
		return -1;
	df = (seb2 + set2) * (seb2 + set2) /
	     (seb2 * seb2 / (double)(nb - 1) + set2 * set2 / (double)(nt - 1));
	q = gsl_cdf_tdist_Qinv((1.0 - level) / 2.0, df);
	if (!isfinite(q) || !isfinite(df))
		return -1;

	out->n_base = nb;
	out->n_target = nt;
	out->mean_base = mb;
	out->mean_target = mt;
	out->diff = mt - mb;
	out->se = se;
	out->t = out->diff / se;
	out->df = df;
	out->p = stats_t_pvalue(out->t, df);
	out->level = level;
	/* as R: (t -/+ q) * se, which is diff -/+ q * se */
	out->ci_lo = (out->t - q) * se;
	out->ci_hi = (out->t + q) * se;
	if (mb == 0.0) {
		out->ci_lo_pct = NAN;
		out->ci_hi_pct = NAN;
	} else {
		out->ci_lo_pct = out->ci_lo * 100.0 / mb;
		out->ci_hi_pct = out->ci_hi * 100.0 / mb;
	}
	return 0;
}

int stats_welch(const double *base, size_t nb, const double *target, size_t nt,
		double level, struct stats_welch *out)
{
	double mb, mt;

	if (base == NULL || target == NULL || out == NULL || nb < 2 || nt < 2)
		return -1;
	if (!(level > 0.0 && level < 1.0))
		return -1;
	if (!all_finite(base, nb) || !all_finite(target, nt))
		return -1;
	mb = stats_mean(base, nb);
	mt = stats_mean(target, nt);
	return welch_core(nb, mb, sum_sq_dev(base, nb, mb) / (double)(nb - 1), nt, mt,
			  sum_sq_dev(target, nt, mt) / (double)(nt - 1), level, out);
}

int stats_welch_moments(const struct stats_moments *b, const struct stats_moments *t,
			double level, struct stats_welch *out)
{
	if (b == NULL || t == NULL || out == NULL || b->n < 2 || t->n < 2)
		return -1;
	if (!(level > 0.0 && level < 1.0))
		return -1;
	if (!isfinite(b->mean) || !isfinite(t->mean) || !isfinite(b->m2) || !isfinite(t->m2))
		return -1;
	return welch_core(b->n, b->mean, b->m2 / (double)(b->n - 1), t->n, t->mean,
			  t->m2 / (double)(t->n - 1), level, out);
}

/* ---- moments: what summaries keep ------------------------------------- */

void stats_moments_of(const double *x, size_t n, struct stats_moments *out)
{
	memset(out, 0, sizeof(*out));
	if (n == 0 || x == NULL)
		return;
	out->n = n;
	out->mean = stats_mean(x, n);
	out->m2 = sum_sq_dev(x, n, out->mean);
	out->min = stats_min(x, n);
	out->max = stats_max(x, n);
	out->rsum = 0.0;
	for (size_t i = 0; i < n; i++) {
		if (!(x[i] > 0.0)) {
			out->rsum = NAN;
			break;
		}
		out->rsum += 1.0 / x[i];
	}
}

void stats_moments_merge(struct stats_moments *a, const struct stats_moments *b)
{
	double na, nb, n, delta;

	if (b->n == 0)
		return;
	if (a->n == 0) {
		*a = *b;
		return;
	}
	na = (double)a->n;
	nb = (double)b->n;
	n = na + nb;
	delta = b->mean - a->mean;
	a->mean = (na * a->mean + nb * b->mean) / n;
	a->m2 += b->m2 + delta * delta * na * nb / n;
	a->min = fmin(a->min, b->min);
	a->max = fmax(a->max, b->max);
	a->rsum += b->rsum; /* NaN stays NaN */
	a->n += b->n;
}

double stats_moments_stddev(const struct stats_moments *m)
{
	if (m->n < 2)
		return NAN;
	return sqrt(m->m2 / (double)(m->n - 1));
}

double stats_moments_cv(const struct stats_moments *m)
{
	if (m->n < 2 || m->mean == 0.0)
		return NAN;
	return stats_moments_stddev(m) * 100.0 / m->mean;
}

double stats_moments_hmean(const struct stats_moments *m)
{
	if (m->n == 0 || !(m->rsum > 0.0))
		return NAN;
	return (double)m->n / m->rsum;
}
