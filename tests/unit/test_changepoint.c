/*
 * test_changepoint.c - change points in trend histories (server/changepoint.c):
 * the issue's goals on synthetic histories with fixed seeds (a 5% step in 2%
 * noise found within one commit; nothing on flat histories of 200 commits),
 * and exact answers on noise-free and hand-made histories.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "server/stats/changepoint.h"

/* splitmix64 and Box-Muller: the same numbers on every machine */
struct cp_rng {
	uint64_t s;
};

static uint64_t cp_rng_next(struct cp_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double cp_rng_normal(struct cp_rng *r)
{
	double u = ((double)(cp_rng_next(r) >> 11) + 0.5) * 0x1.0p-53;
	double v = ((double)(cp_rng_next(r) >> 11) + 0.5) * 0x1.0p-53;

	return sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
}

#define CP_TEST_MAX 200
#define CP_TEST_RUNS 5

/* a history of ncommits at level 1000 with noise_pct normal noise per run and
 * a step of step_pct at commit `at` (none when step_pct is 0) */
struct history {
	double v[CP_TEST_MAX][CP_TEST_RUNS];
	const double *p[CP_TEST_MAX];
	size_t n[CP_TEST_MAX];
};

static void history_make(struct history *h, uint64_t seed, size_t ncommits, size_t runs,
                         double noise_pct, size_t at, double step_pct)
{
	struct cp_rng r = {seed};

	for (size_t i = 0; i < ncommits; i++) {
		double level = 1000.0 * (step_pct != 0.0 && i >= at ? 1.0 + step_pct / 100.0 : 1.0);

		for (size_t j = 0; j < runs; j++)
			h->v[i][j] = level * (1.0 + noise_pct / 100.0 * cp_rng_normal(&r));
		h->p[i] = h->v[i];
		h->n[i] = runs;
	}
}

/* the step's commit for seed s: somewhere in [15, 45) of 60 */
static size_t step_at(uint64_t seed)
{
	struct cp_rng r = {seed ^ 0x5354455000000000ull};

	return 15 + (size_t)(cp_rng_next(&r) % 30);
}

/* over seeds 1..cases: histories of 60 commits, a +-5% step in 2% noise;
 * counts the ones whose step is found within one commit, and points found
 * that are not that step */
static void step_goal(size_t runs, int cases, int *found, int *extra, int *exact)
{
	static struct history h;

	*found = *extra = *exact = 0;
	for (int s = 1; s <= cases; s++) {
		size_t at = step_at((uint64_t)s);
		double step = s % 2 ? 5.0 : -5.0;
		struct cp_point *cp;
		size_t ncp;
		int hit = 0;

		history_make(&h, (uint64_t)s, 60, runs, 2.0, at, step);
		cr_assert_eq(changepoint_detect(h.p, h.n, 60, NULL, &cp, &ncp), 0);
		for (size_t j = 0; j < ncp; j++) {
			size_t d = cp[j].index > at ? cp[j].index - at : at - cp[j].index;

			if (d <= 1 && !hit) {
				hit = 1;
				*exact += d == 0;
				/* the size and its CI */
				cr_expect(fabs(cp[j].shift_pct - step) < 2.0,
				          "seed %d: shift %.2f%%", s, cp[j].shift_pct);
				cr_expect(cp[j].ci_lo_pct < cp[j].shift_pct &&
				          cp[j].shift_pct < cp[j].ci_hi_pct);
				cr_expect(cp[j].p < CP_ALPHA);
			} else {
				(*extra)++;
			}
		}
		*found += hit;
		free(cp);
	}
}

Test(changepoint, issue_goal_step_found_within_one_commit)
{
	int found, extra, exact;

	/* 3 runs per commit (the step is 4.3 sigma of a commit mean), seeds
	 * 1-100: every step found, at the exact commit, nothing else */
	step_goal(3, 100, &found, &extra, &exact);
	cr_expect_eq(found, 100, "3 runs: %d of 100 found", found);
	cr_expect_eq(extra, 0, "3 runs: %d points elsewhere", extra);
	cr_expect(exact >= 98, "3 runs: %d exact", exact);
	/* 2 runs, seeds 1-200: at least 98% within one commit (198 today) */
	step_goal(2, 200, &found, &extra, &exact);
	cr_expect(found >= 196, "2 runs: %d of 200 found", found);
	cr_expect(extra <= 4, "2 runs: %d points elsewhere", extra);
	/* 1 run (2.5 sigma per commit), seeds 1-200: at least 90% within one
	 * commit (184 today). The least-squares position of one known step of
	 * 2.5 sigma is within one commit only ~94% of the time, so no detector
	 * can promise all. */
	step_goal(1, 200, &found, &extra, &exact);
	cr_expect(found >= 180, "1 run: %d of 200 found", found);
	cr_expect(extra <= 20, "1 run: %d points elsewhere", extra);
}

Test(changepoint, issue_goal_flat_history_has_none)
{
	static struct history h;

	/* 200 commits, 2% normal noise, 1, 3 and 5 runs, seeds 1001-1100 each:
	 * not one change point (the scan's family-wise level is 1%) */
	for (size_t runs = 1; runs <= 5; runs += 2) {
		for (int s = 1; s <= 100; s++) {
			struct cp_point *cp;
			size_t ncp;

			history_make(&h, 1000 + (uint64_t)s, 200, runs, 2.0, 0, 0.0);
			cr_assert_eq(changepoint_detect(h.p, h.n, 200, NULL, &cp, &ncp), 0);
			cr_expect_eq(ncp, 0, "runs %zu seed %d: %zu points, first at %zu", runs,
			             1000 + s, ncp, ncp ? cp[0].index : 0);
			cr_expect_null(cp);
			free(cp);
		}
	}
}

/* commits [0, n) with 3 samples level * (1 - d, 1, 1 + d) */
static void pattern(struct history *h, size_t from, size_t to, double level, double d)
{
	for (size_t i = from; i < to; i++) {
		h->v[i][0] = level * (1.0 - d);
		h->v[i][1] = level;
		h->v[i][2] = level * (1.0 + d);
		h->p[i] = h->v[i];
		h->n[i] = 3;
	}
}

Test(changepoint, exact_steps)
{
	static struct history h;
	struct cp_point *cp;
	size_t ncp;

	/* 100 -> 105 at 30, -> 98 at 60, within-commit spread 0.1%: each point
	 * measured over 15 commits (45 samples) on each side, bounded by its
	 * neighbours: exactly +5% and -6.667% */
	pattern(&h, 0, 30, 100.0, 0.001);
	pattern(&h, 30, 60, 105.0, 0.001);
	pattern(&h, 60, 90, 98.0, 0.001);
	cr_assert_eq(changepoint_detect(h.p, h.n, 90, NULL, &cp, &ncp), 0);
	cr_assert_eq(ncp, 2);
	cr_expect_eq(cp[0].index, 30);
	cr_expect_eq(cp[0].prev, 29);
	cr_expect_float_eq(cp[0].before, 100.0, 1e-9);
	cr_expect_float_eq(cp[0].after, 105.0, 1e-9);
	cr_expect_float_eq(cp[0].shift_pct, 5.0, 1e-9);
	cr_expect(cp[0].ci_lo_pct < 5.0 && cp[0].ci_hi_pct > 5.0);
	cr_expect(cp[0].ci_hi_pct - cp[0].ci_lo_pct < 0.2);
	cr_expect(cp[0].p < 1e-10);
	cr_expect_eq(cp[1].index, 60);
	cr_expect_float_eq(cp[1].shift_pct, 100.0 * (98.0 - 105.0) / 105.0, 1e-9);
	free(cp);

	/* no noise at all (one run, constant levels): the step is certain */
	for (size_t i = 0; i < 40; i++) {
		h.v[i][0] = i < 20 ? 100.0 : 110.0;
		h.p[i] = h.v[i];
		h.n[i] = 1;
	}
	cr_assert_eq(changepoint_detect(h.p, h.n, 40, NULL, &cp, &ncp), 0);
	cr_assert_eq(ncp, 1);
	cr_expect_eq(cp[0].index, 20);
	cr_expect_float_eq(cp[0].shift_pct, 10.0, 1e-9);
	cr_expect_float_eq(cp[0].ci_lo_pct, 10.0, 1e-9);
	cr_expect_float_eq(cp[0].ci_hi_pct, 10.0, 1e-9);
	cr_expect_eq(cp[0].p, 0.0);
	free(cp);
}

Test(changepoint, minimum_magnitude_and_gaps)
{
	static struct history h;
	struct cp_config cfg;
	struct cp_point *cp;
	size_t ncp;

	/* +0.5% in 0.05% noise: certain, but below the default 1% */
	pattern(&h, 0, 25, 1000.0, 0.0005);
	pattern(&h, 25, 50, 1005.0, 0.0005);
	cr_assert_eq(changepoint_detect(h.p, h.n, 50, NULL, &cp, &ncp), 0);
	cr_expect_eq(ncp, 0);
	cp_config_init(&cfg);
	cfg.min_pct = 0.25;
	cr_assert_eq(changepoint_detect(h.p, h.n, 50, &cfg, &cp, &ncp), 0);
	cr_assert_eq(ncp, 1);
	cr_expect_eq(cp[0].index, 25);
	cr_expect_float_eq(cp[0].shift_pct, 0.5, 1e-9);
	free(cp);

	/* commits without samples, and a NaN, are skipped: the step lies in
	 * (19, 22] when commits 20 and 21 have nothing */
	pattern(&h, 0, 20, 100.0, 0.01);
	pattern(&h, 20, 45, 120.0, 0.01);
	h.n[20] = 0;
	h.p[21] = NULL;
	h.n[21] = 0;
	h.v[30][1] = NAN;
	cr_assert_eq(changepoint_detect(h.p, h.n, 45, NULL, &cp, &ncp), 0);
	cr_assert_eq(ncp, 1);
	cr_expect_eq(cp[0].index, 22);
	cr_expect_eq(cp[0].prev, 19);
	cr_expect_float_eq(cp[0].shift_pct, 20.0, 1e-9);
	free(cp);
}

Test(changepoint, arguments)
{
	static struct history h;
	struct cp_config cfg;
	struct cp_point *cp = (struct cp_point *)&h;
	size_t ncp = 7;

	pattern(&h, 0, 3, 100.0, 0.01);
	cr_expect_eq(changepoint_detect(NULL, h.n, 3, NULL, &cp, &ncp), -1);
	cr_expect_null(cp);
	cr_expect_eq(ncp, 0);
	cr_expect_eq(changepoint_detect(h.p, h.n, 3, NULL, NULL, &ncp), -1);
	cp_config_init(&cfg);
	cfg.alpha = 0.0;
	cr_expect_eq(changepoint_detect(h.p, h.n, 3, &cfg, &cp, &ncp), -1);
	cp_config_init(&cfg);
	cfg.min_seg = 5;
	cfg.window = 4;
	cr_expect_eq(changepoint_detect(h.p, h.n, 3, &cfg, &cp, &ncp), -1);
	/* too short to say anything: no points, no error */
	cr_expect_eq(changepoint_detect(h.p, h.n, 3, NULL, &cp, &ncp), 0);
	cr_expect_eq(ncp, 0);
	cr_expect_null(cp);
	cr_expect_eq(changepoint_detect(h.p, h.n, 0, NULL, &cp, &ncp), 0);
	cr_expect_eq(ncp, 0);
}

/*
 * Archived runs: the first half of each history's commits summarised
 * (their values gone, struct stats_moments kept) find the same change
 * points, sizes and p-values as the values themselves.
 */
Test(changepoint, archived_runs_as_moments)
{
	static struct history h;
	static struct stats_moments arch[60];
	static const double *p[60];
	static size_t n[60];

	for (int s = 1; s <= 40; s++) {
		size_t at = step_at((uint64_t)s), ncp, ncq;
		struct cp_point *cp, *cq;

		history_make(&h, (uint64_t)s, 60, 5, 2.0, at, s % 2 ? 5.0 : -5.0);
		for (size_t i = 0; i < 60; i++) {
			memset(&arch[i], 0, sizeof(arch[i]));
			p[i] = h.p[i];
			n[i] = h.n[i];
			if (i < 30) { /* archived: runs 0-2 and 3-4 summarised */
				struct stats_moments b;
				stats_moments_of(h.v[i], 3, &arch[i]);
				stats_moments_of(h.v[i] + 3, 2, &b);
				stats_moments_merge(&arch[i], &b);
				p[i] = NULL;
				n[i] = 0;
			}
		}
		cr_assert_eq(changepoint_detect(h.p, h.n, 60, NULL, &cp, &ncp), 0);
		cr_assert_eq(changepoint_detect_ex(p, n, arch, 60, NULL, &cq, &ncq), 0);
		cr_assert_eq(ncq, ncp, "seed %d", s);
		for (size_t j = 0; j < ncp; j++) {
			cr_expect_eq(cq[j].index, cp[j].index, "seed %d", s);
			cr_expect_float_eq(cq[j].shift_pct, cp[j].shift_pct, 1e-9);
			cr_expect_float_eq(cq[j].p, cp[j].p, 1e-9 * cp[j].p + 1e-300);
		}
		free(cp);
		free(cq);
	}
}
