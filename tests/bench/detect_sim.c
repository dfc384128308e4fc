/*
 * detect_sim.c - the simulation of `make bench-detect` (detect.c): a small
 * deterministic PRNG, noise of unit standard deviation, trends drawn from a
 * scenario, and the methods judging one commit pair.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "server/stats/stats.h"
#include "server/stats/stats_lkp.h"
#include "server/stats/verdict.h"
#include "tests/bench/detect_sim.h"

/* ---- a small deterministic PRNG: splitmix64 + Box-Muller ---------------- */

uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double rng_unif(struct rng *r) /* (0, 1) */
{
	return ((double)(rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

double rng_normal(struct rng *r)
{
	double u = rng_unif(r), v = rng_unif(r);

	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

size_t rng_range(struct rng *r, size_t lo, size_t hi) /* [lo, hi] */
{
	return lo + (size_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* ---- noise with unit standard deviation (the "sigma" of the tables) ---- */

double noise_draw(struct rng *r, enum noise k)
{
	double z = rng_normal(r), c;

	switch (k) {
	case N_T3: /* Student t, 3 df (variance 3): z / sqrt(chi2_3 / 3) */
		c = 0.0;
		for (int i = 0; i < 3; i++)
			c += pow(rng_normal(r), 2.0);
		return z / sqrt(c / 3.0) / sqrt(3.0);
	case N_BIMODAL: /* two modes at +-0.9, each sd 0.436: variance 1 */
		return (rng_unif(r) < 0.5 ? -0.9 : 0.9) + sqrt(1.0 - 0.81) * z;
	case N_OUTLIER: /* normal, and 3% of runs broken by +-6 sigma */
		if (rng_unif(r) < 0.03)
			z += rng_unif(r) < 0.5 ? -6.0 : 6.0;
		return z;
	default:
		return z;
	}
}

/* ---- one simulated trend ----------------------------------------------- */

void trend_make(struct rng *r, const struct scenario *sc, struct trend *t)
{
	double level = LEVEL, walk = 0.0, sd = sc->sigma_pct / 100.0;

	t->ncommits = sc->ncommits;
	for (size_t i = 0; i < sc->ncommits; i++) {
		double mu, ce;

		for (size_t s = 0; s < sc->nsteps; s++)
			if (sc->step_at[s] == i)
				level *= 1.0 + sc->step_pct[s] / 100.0;
		walk += sc->walk * rng_normal(r);
		ce = sc->commit_sd * rng_normal(r);
		mu = level * (1.0 + sd * (sc->drift * (double)i + walk + ce));
		t->n[i] = rng_range(r, sc->runs_lo, sc->runs_hi);
		for (size_t j = 0; j < t->n[i]; j++)
			t->v[i][j] = mu * (1.0 + sd * noise_draw(r, sc->noise));
		t->p[i] = t->v[i];
	}
}

/* ---- the methods on one commit pair (commit k against k - 1) ------------ */

const char *const method_name[M_COUNT] = {"LKP rule", "Welch p<0.05", "kperf, pair only",
                                          "kperf verdict"};

/* the history the server has when it judges commit k against k - 1: up to
 * HIST_WINDOW commits before the pair (the pair's own spread joins the pool
 * inside verdict_decide) */
int trend_history(const struct trend *t, size_t k, struct noise_hist *h)
{
	size_t end = k - 1, lo = end > HIST_WINDOW ? end - HIST_WINDOW : 0;

	return verdict_noise_from_history(t->p + lo, t->n + lo, end - lo, h);
}

/* +1 / -1: the method calls a change up / down; 0: noise */
int decide(enum method m, const struct trend *t, size_t k, const struct noise_hist *h, double alpha)
{
	const double *b = t->v[k - 1], *a = t->v[k];
	size_t nb = t->n[k - 1], na = t->n[k];
	struct verdict_config cfg;
	struct verdict_in in;
	struct verdict_out out;
	struct stats_welch w;
	int up = stats_mean(a, na) > stats_mean(b, nb) ? 1 : -1;

	switch (m) {
	case M_LKP:
		return lkp_changed(METRIC, SUITE, b, nb, nb, a, na, na) == 1 ? up : 0;
	case M_WELCH:
		return nb >= 2 && na >= 2 && stats_welch(b, nb, a, na, 0.95, &w) == 0 && w.p < 0.05
		           ? up
		           : 0;
	default:
		break;
	}
	verdict_config_init(&cfg);
	if (alpha > 0.0)
		cfg.alpha_history = alpha;
	memset(&in, 0, sizeof(in));
	in.metric = METRIC;
	in.suite = SUITE;
	in.dir = DIR_HIGHER;
	in.base = b;
	in.nb = nb;
	in.target = a;
	in.nt = na;
	in.hist = m == M_KPERF ? h : NULL;
	in.cfg = &cfg;
	if (verdict_decide(&in, &out) < 0 || out.verdict == VERDICT_NOISE)
		return 0;
	return out.verdict == VERDICT_IMPROVEMENT ? 1 : -1;
}
