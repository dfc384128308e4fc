/*
 * changepoint.c - binary segmentation of a trend's commit levels with a
 * windowed t test against the history's own noise, then least-squares
 * placement of each step (see changepoint.h). The regression worker stores
 * what it finds; tests/bench/detect.c measures it against per-pair rules.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "server/stats/changepoint.h"
#include "server/stats/stats.h"
#include "server/stats/verdict.h"
#include "lib/util.h"

#define MAD_SCALE 1.482602218505602 /* 1 / Phi^-1(3/4): MAD -> sigma */
#define MAD_EFFICIENCY 0.37         /* df of a MAD estimate per observation */

void cp_config_init(struct cp_config *cfg)
{
	cfg->alpha = CP_ALPHA;
	cfg->min_pct = CP_MIN_PCT;
	cfg->window = CP_WINDOW;
	cfg->window_samples = CP_WINDOW_SAMPLES;
	cfg->min_seg = CP_MIN_SEG;
}

/* The history reduced to commits with samples. */
struct levels {
	size_t m;
	size_t *idx;  /* original commit index */
	double *lv;   /* mean level */
	double *w;    /* finite samples */
	double *cw;   /* prefix sums of w: cw[k] = w[0] + ... + w[k-1] */
	double *cs;   /* prefix sums of w * lv */
	double s, df; /* noise of one sample, as seen between commits */
};

/* one tested split */
struct split {
	size_t k;
	double before, after, diff, se, t, p; /* p not yet adjusted */
	double score; /* |diff| / sqrt(1/wl + 1/wr): |t| without the noise, so
	               * that splits rank even in a noise-free history */
	size_t mult;  /* splits scanned when it was found */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median_inplace(double *x, size_t n)
{
	qsort(x, n, sizeof(*x), cmp_double);
	return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static void levels_release(struct levels *L)
{
	free(L->idx);
	free(L->lv);
	free(L->w);
	free(L->cw);
	free(L->cs);
}

/* the noise between commits (successive differences) or within them,
 * whichever is larger: a step test must not be sharper than either */
static void levels_noise(struct levels *L, const double *const *samples, const size_t *n,
                         const struct stats_moments *arch, size_t ncommits)
{
	size_t nd = L->m - 1;
	double *d = xmalloc(nd * sizeof(*d)), med, *lvcopy;
	struct noise_hist h;

	for (size_t j = 1; j < L->m; j++)
		d[j - 1] = (L->lv[j] - L->lv[j - 1]) / sqrt(1.0 / L->w[j] + 1.0 / L->w[j - 1]);
	med = median_inplace(d, nd);
	for (size_t j = 0; j < nd; j++)
		d[j] = fabs(d[j] - med);
	L->s = MAD_SCALE * median_inplace(d, nd);
	L->df = fmax(1.0, MAD_EFFICIENCY * (double)nd);
	free(d);

	if (verdict_noise_from_history_ex(samples, n, arch, ncommits, &h) == 0) {
		double sw;

		lvcopy = xmalloc(L->m * sizeof(*lvcopy));
		for (size_t j = 0; j < L->m; j++)
			lvcopy[j] = fabs(L->lv[j]);
		sw = h.sigma_rel * median_inplace(lvcopy, L->m);
		free(lvcopy);
		if (sw > L->s) {
			L->s = sw;
			L->df = h.df;
		}
	}
}

/* 0 and *L filled; -1 when fewer than min commits have samples */
static int levels_init(struct levels *L, const double *const *samples, const size_t *n,
                       const struct stats_moments *arch, size_t ncommits, size_t min)
{
	memset(L, 0, sizeof(*L));
	L->idx = xmalloc(ncommits * sizeof(*L->idx));
	L->lv = xmalloc(ncommits * sizeof(*L->lv));
	L->w = xmalloc(ncommits * sizeof(*L->w));
	for (size_t i = 0; i < ncommits; i++) {
		double sum = 0.0;
		size_t c = 0;

		for (size_t j = 0; samples[i] != NULL && j < n[i]; j++) {
			if (isfinite(samples[i][j])) {
				sum += samples[i][j];
				c++;
			}
		}
		if (arch && arch[i].n && isfinite(arch[i].mean)) { /* archived runs */
			sum += arch[i].mean * (double)arch[i].n;
			c += arch[i].n;
		}
		if (c == 0)
			continue;
		L->idx[L->m] = i;
		L->lv[L->m] = sum / (double)c;
		L->w[L->m] = (double)c;
		L->m++;
	}
	if (L->m < min || L->m < 3)
		return -1;
	L->cw = xmalloc((L->m + 1) * sizeof(*L->cw));
	L->cs = xmalloc((L->m + 1) * sizeof(*L->cs));
	L->cw[0] = L->cs[0] = 0.0;
	for (size_t j = 0; j < L->m; j++) {
		L->cw[j + 1] = L->cw[j] + L->w[j];
		L->cs[j + 1] = L->cs[j] + L->w[j] * L->lv[j];
	}
	levels_noise(L, samples, n, arch, ncommits);
	return 0;
}

/* commits [lo, k) against [k, hi) */
static void split_eval(const struct levels *L, size_t lo, size_t k, size_t hi, struct split *sp)
{
	double wl = L->cw[k] - L->cw[lo], wr = L->cw[hi] - L->cw[k];

	sp->k = k;
	sp->before = (L->cs[k] - L->cs[lo]) / wl;
	sp->after = (L->cs[hi] - L->cs[k]) / wr;
	sp->diff = sp->after - sp->before;
	sp->score = fabs(sp->diff) / sqrt(1.0 / wl + 1.0 / wr);
	sp->se = L->s * sqrt(1.0 / wl + 1.0 / wr);
	if (sp->se > 0.0) {
		sp->t = sp->diff / sp->se;
		sp->p = stats_t_pvalue(sp->t, L->df);
	} else {
		/* no noise at all: any difference is a step */
		sp->t = sp->diff != 0.0 ? copysign(INFINITY, sp->diff) : 0.0;
		sp->p = sp->diff != 0.0 ? 0.0 : 1.0;
	}
}

/* the commits on each side of k in [a, b) that a test compares: `window`
 * commits, more when they hold fewer than `window_samples` samples */
static void window_bounds(const struct levels *L, const struct cp_config *cfg, size_t a, size_t b,
                          size_t k, size_t *lo, size_t *hi)
{
	double want = (double)cfg->window_samples;

	*lo = k - a > cfg->window ? k - cfg->window : a;
	while (*lo > a && L->cw[k] - L->cw[*lo] < want)
		(*lo)--;
	*hi = b - k > cfg->window ? k + cfg->window : b;
	while (*hi < b && L->cw[*hi] - L->cw[k] < want)
		(*hi)++;
}

/* the split at k of [a, b), each side cut to the window */
static void split_window(const struct levels *L, const struct cp_config *cfg, size_t a, size_t b,
                         size_t k, struct split *sp)
{
	size_t lo, hi;

	window_bounds(L, cfg, a, b, k, &lo, &hi);
	split_eval(L, lo, k, hi, sp);
}

/*
 * Where exactly the step is: the sliding windows of the scan add noise to the
 * position (each shift of k also moves both outer ends), so the point moves
 * to the best split of the fixed region around it, which is the
 * least-squares (maximum-likelihood) position of one step in that region.
 */
static size_t split_locate(const struct levels *L, size_t a, size_t b, size_t k,
                           const struct cp_config *cfg)
{
	size_t lo, hi, best = k;
	double best_score = -1.0;
	struct split sp;

	window_bounds(L, cfg, a, b, k, &lo, &hi);
	for (size_t j = lo + cfg->min_seg; j + cfg->min_seg <= hi; j++) {
		if (j < a + cfg->min_seg || j + cfg->min_seg > b)
			continue;
		split_eval(L, lo, j, hi, &sp);
		if (sp.score > best_score) {
			best_score = sp.score;
			best = j;
		}
	}
	return best;
}

static double shift_pct(const struct split *sp)
{
	return sp->before != 0.0 ? 100.0 * sp->diff / fabs(sp->before) : NAN;
}

static int split_passes(const struct split *sp, const struct cp_config *cfg)
{
	double p = fmin(1.0, sp->p * (double)sp->mult);

	return p < cfg->alpha && fabs(shift_pct(sp)) >= cfg->min_pct;
}

/* binary segmentation; found splits are appended to *pts */
static void segment_scan(const struct levels *L, const struct cp_config *cfg, struct split **pts,
                         size_t *npts)
{
	size_t(*stack)[2] = xmalloc(L->m * sizeof(*stack));
	size_t top = 0;

	stack[top][0] = 0;
	stack[top][1] = L->m;
	top++;
	while (top > 0) {
		size_t a = stack[top - 1][0], b = stack[top - 1][1];
		struct split best = {0}, sp;
		int have = 0;

		top--;
		if (b - a < 2 * cfg->min_seg)
			continue;
		for (size_t k = a + cfg->min_seg; k + cfg->min_seg <= b; k++) {
			split_window(L, cfg, a, b, k, &sp);
			if (!have || sp.score > best.score) {
				best = sp;
				have = 1;
			}
		}
		if (!have)
			continue;
		best.mult = b - a - 2 * cfg->min_seg + 1;
		if (!split_passes(&best, cfg))
			continue;
		*pts = xrealloc(*pts, (*npts + 1) * sizeof(**pts));
		(*pts)[(*npts)++] = best;
		/* each half has >= min_seg commits; push both (a stack of m
		 * entries suffices: segments are disjoint and non-empty) */
		stack[top][0] = a;
		stack[top][1] = best.k;
		top++;
		stack[top][0] = best.k;
		stack[top][1] = b;
		top++;
	}
	free(stack);
}

static int cmp_split(const void *a, const void *b)
{
	size_t x = ((const struct split *)a)->k, y = ((const struct split *)b)->k;

	return (x > y) - (x < y);
}

/* place every point between its neighbours, re-measure it there; drop the
 * worst failing one and start over until all pass */
static void points_refine(const struct levels *L, const struct cp_config *cfg, struct split *pts,
                          size_t *npts)
{
	if (*npts == 0)
		return;
	qsort(pts, *npts, sizeof(*pts), cmp_split);
	for (;;) {
		size_t worst = *npts;
		double worst_p = -1.0;

		for (int round = 0; round < 8; round++) {
			int moved = 0;

			for (size_t j = 0; j < *npts; j++) {
				size_t a = j ? pts[j - 1].k : 0;
				size_t b = j + 1 < *npts ? pts[j + 1].k : L->m;
				size_t k = split_locate(L, a, b, pts[j].k, cfg);

				moved |= k != pts[j].k;
				pts[j].k = k;
			}
			if (!moved)
				break;
		}
		for (size_t j = 0; j < *npts; j++) {
			size_t a = j ? pts[j - 1].k : 0;
			size_t b = j + 1 < *npts ? pts[j + 1].k : L->m;
			size_t mult = pts[j].mult;

			split_window(L, cfg, a, b, pts[j].k, &pts[j]);
			pts[j].mult = mult;
			if (!split_passes(&pts[j], cfg) && pts[j].p > worst_p) {
				worst = j;
				worst_p = pts[j].p;
			}
		}
		if (worst == *npts)
			return;
		memmove(pts + worst, pts + worst + 1, (*npts - worst - 1) * sizeof(*pts));
		(*npts)--;
	}
}

int changepoint_detect(const double *const *samples, const size_t *n, size_t ncommits,
                       const struct cp_config *cfg, struct cp_point **out, size_t *nout)
{
	return changepoint_detect_ex(samples, n, NULL, ncommits, cfg, out, nout);
}

int changepoint_detect_ex(const double *const *samples, const size_t *n,
                          const struct stats_moments *arch, size_t ncommits,
                          const struct cp_config *cfg, struct cp_point **out, size_t *nout)
{
	struct cp_config dflt;
	struct levels L;
	struct split *pts = NULL;
	size_t npts = 0;
	double q;

	if (out != NULL)
		*out = NULL;
	if (nout != NULL)
		*nout = 0;
	if (samples == NULL || n == NULL || out == NULL || nout == NULL ||
	    ncommits > CP_MAX_COMMITS)
		return -1;
	if (cfg == NULL) {
		cp_config_init(&dflt);
		cfg = &dflt;
	}
	if (!(cfg->alpha > 0.0 && cfg->alpha < 1.0) || !(cfg->min_pct >= 0.0) || cfg->min_seg < 1 ||
	    cfg->window < cfg->min_seg)
		return -1;
	if (ncommits == 0)
		return 0;
	if (levels_init(&L, samples, n, arch, ncommits, 2 * cfg->min_seg) < 0) {
		levels_release(&L);
		return 0;
	}
	segment_scan(&L, cfg, &pts, &npts);
	points_refine(&L, cfg, pts, &npts);

	q = gsl_cdf_tdist_Qinv(0.025, L.df);
	if (npts > 0)
		*out = xmalloc(npts * sizeof(**out));
	for (size_t j = 0; j < npts; j++) {
		const struct split *sp = &pts[j];
		struct cp_point *cp = &(*out)[j];
		double scale = 100.0 / fabs(sp->before);

		cp->index = L.idx[sp->k];
		cp->prev = L.idx[sp->k - 1];
		cp->before = sp->before;
		cp->after = sp->after;
		cp->shift_pct = shift_pct(sp);
		cp->ci_lo_pct = (sp->diff - q * sp->se) * scale;
		cp->ci_hi_pct = (sp->diff + q * sp->se) * scale;
		cp->p = fmin(1.0, sp->p * (double)sp->mult);
	}
	*nout = npts;
	free(pts);
	levels_release(&L);
	return 0;
}
