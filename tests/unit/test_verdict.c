/*
 * test_verdict.c - kperf's verdict (server/verdict.c) against hand-computed
 * values: the floors and their overrides, directions, which test decides
 * (history, Welch, LKP's rule, none), the history noise pool of constructed
 * histories, and Benjamini-Hochberg on textbook examples.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "server/stats/compare.h"
#include "server/stats/verdict.h"

static struct verdict_in in_of(const char *metric, enum direction dir, const double *b, size_t nb,
                               const double *t, size_t nt)
{
	struct verdict_in in;

	memset(&in, 0, sizeof(in));
	in.metric = metric;
	in.suite = "vm-scalability";
	in.dir = dir;
	in.base = b;
	in.nb = nb;
	in.target = t;
	in.nt = nt;
	return in;
}

/* three samples around level, spread 0.01% of it: any real step is clear */
static void tight(double level, double *x)
{
	x[0] = level * 0.9999;
	x[1] = level;
	x[2] = level * 1.0001;
}

/* A floor row: base level, relative (or absolute) step, the verdict. */
struct floor_row {
	const char *metric;
	const char *cfg; /* NULL: defaults */
	double level, step;
	int absolute_step; /* step is added, not multiplied */
	int passes;
};

Test(verdict, floors)
{
	static const char *over = "perf-profile.*=2pp,proc-vmstat.pgscan_*=10%,lock_stat.*=3%";
	static const struct floor_row rows[] = {
	    /* benchmark KPI: 1% */
	    {"vm-scalability.throughput", NULL, 100.0, 0.009, 0, 0},
	    {"vm-scalability.throughput", NULL, 100.0, 0.011, 0, 1},
	    /* performance monitor: 1% (large counts: LKP's max > 1000) */
	    {"proc-vmstat.pgscan_kswapd", NULL, 1e6, 0.009, 0, 0},
	    {"proc-vmstat.pgscan_kswapd", NULL, 1e6, 0.011, 0, 1},
	    /* other monitor: 5% */
	    {"meminfo.Active", NULL, 1e6, 0.045, 0, 0},
	    {"meminfo.Active", NULL, 1e6, 0.055, 0, 1},
	    {"slabinfo.dentry.active_objs", NULL, 1e6, 0.049, 0, 0},
	    {"slabinfo.dentry.active_objs", NULL, 1e6, 0.051, 0, 1},
	    /* absolute rows: 1 percentage point */
	    {"perf-profile.self.cycles-pp.lruvec_lock", NULL, 10.0, 0.9, 1, 0},
	    {"perf-profile.self.cycles-pp.lruvec_lock", NULL, 10.0, 1.1, 1, 1},
	    {"vmstat.cpu.sy%", NULL, 30.0, 0.9, 1, 0},
	    {"vmstat.cpu.sy%", NULL, 30.0, 1.1, 1, 1},
	    /* LKP's absolute floors: a 10% change of a small counter */
	    {"proc-vmstat.pgscan_kswapd", NULL, 500.0, 0.10, 0, 0},
	    {"lock_stat.&lruvec->lru_lock.contentions", NULL, 5000.0, 0.10, 0, 0},
	    {"lock_stat.&lruvec->lru_lock.contentions", NULL, 5e6, 0.10, 0, 1},
	    /* overrides */
	    {"perf-profile.self.cycles-pp.lruvec_lock", "over", 10.0, 1.5, 1, 0},
	    {"perf-profile.self.cycles-pp.lruvec_lock", "over", 10.0, 2.5, 1, 1},
	    {"proc-vmstat.pgscan_direct", "over", 1e6, 0.08, 0, 0},
	    {"proc-vmstat.pgscan_direct", "over", 1e6, 0.11, 0, 1},
	    {"proc-vmstat.pgsteal_direct", "over", 1e6, 0.08, 0, 1}, /* no match: 1% */
	    {"lock_stat.&lruvec->lru_lock.contentions", "over", 5e6, 0.025, 0, 0},
	    {"lock_stat.&lruvec->lru_lock.contentions", "over", 5000.0, 0.04, 0, 1},
	    {"vm-scalability.throughput", "over", 100.0, 0.011, 0, 1},
	};
	struct verdict_config cfg;
	char err[128];

	cr_assert_eq(verdict_config_parse(&cfg, over, err, sizeof(err)), 0, "%s", err);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct floor_row *r = &rows[i];
		double b[3], t[3];
		struct verdict_in in;
		struct verdict_out out;

		tight(r->level, b);
		for (int j = 0; j < 3; j++)
			t[j] = r->absolute_step ? b[j] + r->step : b[j] * (1.0 + r->step);
		in = in_of(r->metric, DIR_HIGHER, b, 3, t, 3);
		in.cfg = r->cfg ? &cfg : NULL;
		cr_assert_eq(verdict_decide(&in, &out), 0, "row %zu", i);
		cr_expect_eq(out.passes_floor, r->passes, "row %zu %s %s: passes_floor %d", i,
		             r->metric, r->cfg ? r->cfg : "", out.passes_floor);
		cr_expect_str_eq(out.test, "welch", "row %zu", i);
		cr_expect_eq(out.verdict, r->passes ? VERDICT_IMPROVEMENT : VERDICT_NOISE,
		             "row %zu %s: verdict %s", i, r->metric, verdict_name(out.verdict));
	}
	verdict_config_release(&cfg);
}

Test(verdict, change_numbers)
{
	const double b[] = {9.9, 10.0, 10.1}, t[] = {12.9, 13.0, 13.1};
	struct verdict_in in =
	    in_of("perf-profile.children.cycles-pp.folio_lruvec_lock", DIR_LOWER, b, 3, t, 3);
	struct verdict_out out;

	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_float_eq(out.change_abs, 3.0, 1e-12);
	cr_expect_float_eq(out.change_pct, 30.0, 1e-12);
	cr_expect_eq(out.absolute, 1);
	cr_expect_eq(out.lkp_changed, 1);
	cr_expect_eq(out.verdict, VERDICT_REGRESSION);
}

Test(verdict, directions)
{
	static const struct {
		enum direction dir;
		double step;
		enum verdict want;
	} rows[] = {
	    {DIR_HIGHER, +0.05, VERDICT_IMPROVEMENT}, {DIR_HIGHER, -0.05, VERDICT_REGRESSION},
	    {DIR_LOWER, +0.05, VERDICT_REGRESSION},   {DIR_LOWER, -0.05, VERDICT_IMPROVEMENT},
	    {DIR_NONE, +0.05, VERDICT_CHANGED},       {DIR_NONE, -0.05, VERDICT_CHANGED},
	    {DIR_NONE, +0.001, VERDICT_NOISE},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double b[3], t[3];
		struct verdict_in in;
		struct verdict_out out;

		tight(1000.0, b);
		for (int j = 0; j < 3; j++)
			t[j] = b[j] * (1.0 + rows[i].step);
		in = in_of("vm-scalability.free_time", rows[i].dir, b, 3, t, 3);
		cr_assert_eq(verdict_decide(&in, &out), 0);
		cr_expect_eq(out.verdict, rows[i].want, "row %zu: %s", i,
		             verdict_name(out.verdict));
	}
}

Test(verdict, welch_decides_with_three_each)
{
	const double b[] = {100.0, 101.0, 99.0}, t[] = {105.0, 106.0, 104.0};
	const double nb[] = {100.0, 103.0, 97.0}, nt[] = {101.0, 104.0, 98.0};
	struct verdict_in in = in_of("vm-scalability.throughput", DIR_HIGHER, b, 3, t, 3);
	struct verdict_out out;

	/* t = 5 / sqrt(2/3) = 6.1237 on 4 df: p = 0.0036022326 (mpmath) */
	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_str_eq(out.test, "welch");
	cr_expect_float_eq(out.p, 0.00360223260910400, 1e-12);
	cr_expect_eq(out.verdict, VERDICT_IMPROVEMENT);

	/* +1% with sd 3: Welch's CI straddles zero although the floor passes */
	in = in_of("vm-scalability.throughput", DIR_HIGHER, nb, 3, nt, 3);
	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_eq(out.passes_floor, 1);
	cr_expect(out.p > 0.05);
	cr_expect_eq(out.verdict, VERDICT_NOISE);
}

Test(verdict, lkp_rule_below_three_samples)
{
	/* 3 vs 2: LKP's rule. A.min 110 > B.median 101 and A.median 111 > B.max
	 * 102, ratio 111/101 > 1.01: changed */
	const double b[] = {100.0, 101.0, 102.0}, t[] = {110.0, 111.0};
	/* 3 vs 2, overlapping: A.min 100.5 < B.median 101 */
	const double t2[] = {100.5, 112.0};
	struct verdict_in in = in_of("vm-scalability.throughput", DIR_HIGHER, b, 3, t, 2);
	struct verdict_out out;

	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_str_eq(out.test, "lkp");
	cr_expect(isnan(out.p));
	cr_expect_eq(out.lkp_changed, 1);
	cr_expect_eq(out.verdict, VERDICT_IMPROVEMENT);

	in = in_of("vm-scalability.throughput", DIR_HIGHER, b, 3, t2, 2);
	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_str_eq(out.test, "lkp");
	cr_expect_eq(out.lkp_changed, 0);
	cr_expect_eq(out.passes_floor, 1); /* +5.2% */
	cr_expect_eq(out.verdict, VERDICT_NOISE);

	/* per-run values win over pooled samples: 2 runs of 3 iterations is
	 * Welch on 6 vs 6 samples, LKP's rule on 2 runs (nothing: < 3 runs) */
	const double bs[] = {100, 100.1, 99.9, 101, 101.1, 100.9};
	const double ts[] = {110, 110.1, 109.9, 111, 111.1, 110.9};
	const double br[] = {100, 101}, tr[] = {110, 111};
	in = in_of("vm-scalability.throughput", DIR_HIGHER, bs, 6, ts, 6);
	in.base_runs = br;
	in.nbr = 2;
	in.target_runs = tr;
	in.ntr = 2;
	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_str_eq(out.test, "welch");
	cr_expect_eq(out.lkp_changed, 0);
	cr_expect_eq(out.verdict, VERDICT_IMPROVEMENT);
}

Test(verdict, noise_when_both_below_three_unless_history)
{
	const double b[] = {100.0, 101.0}, t[] = {120.0, 121.0};
	const struct noise_hist h = {20, 0.005, 60.0};
	struct verdict_in in = in_of("vm-scalability.throughput", DIR_HIGHER, b, 2, t, 2);
	struct verdict_out out;

	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_str_eq(out.test, "none");
	cr_expect_eq(out.passes_floor, 1);
	cr_expect_eq(out.verdict, VERDICT_NOISE);

	in.hist = &h;
	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_str_eq(out.test, "history");
	cr_expect(out.p < 1e-6);
	cr_expect_eq(out.verdict, VERDICT_IMPROVEMENT);

	/* a history too thin to trust is ignored */
	const struct noise_hist thin = {3, 0.005, 6.0};
	in.hist = &thin;
	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_str_eq(out.test, "none");
}

Test(verdict, history_test_by_hand)
{
	/* 1 vs 1 sample, sigma 1%, 1000 df: se = 0.01 sqrt(100^2 + 103^2),
	 * t = 2.08974, p = 0.0368931177 (mpmath): noise at the default level
	 * (0.035), a change at 0.05 */
	const double b1[] = {100.0}, t1[] = {103.0};
	const struct noise_hist h = {30, 0.01, 1000.0};
	struct verdict_config cfg;
	struct verdict_in in = in_of("vm-scalability.throughput", DIR_LOWER, b1, 1, t1, 1);
	struct verdict_out out;

	in.hist = &h;
	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_str_eq(out.test, "history");
	cr_expect_float_eq(out.p, 0.0368931177461539, 1e-10);
	cr_expect_eq(out.verdict, VERDICT_NOISE);
	cr_assert_eq(verdict_config_parse(&cfg, NULL, NULL, 0), 0);
	cfg.alpha_history = 0.05;
	in.cfg = &cfg;
	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_eq(out.verdict, VERDICT_REGRESSION);
	verdict_config_release(&cfg);

	/* 3 vs 3: the pair's spread joins the pool, (50 * 1e-4 + 2/100^2 +
	 * 2/103^2) / 54; t = 3.623394, p on 54 df = 0.000643481 (mpmath) */
	const double b3[] = {99.0, 100.0, 101.0}, t3[] = {102.0, 103.0, 104.0};
	const struct noise_hist h50 = {25, 0.01, 50.0};
	in = in_of("vm-scalability.throughput", DIR_HIGHER, b3, 3, t3, 3);
	in.hist = &h50;
	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_str_eq(out.test, "history");
	cr_expect_float_eq(out.p, 0.000643481420651670, 1e-12);
	cr_expect_eq(out.verdict, VERDICT_IMPROVEMENT);
}

Test(verdict, history_default_level)
{
	/* 1 vs 1 sample, sigma 1%, 1000 df: se = 0.01 sqrt(100^2 + 103.4^2) =
	 * 1.43845612, t = 2.36364527, p = 0.0182865558689971 (mpmath, by the
	 * regularized incomplete beta and by integrating the t density): a
	 * change at the default level 0.035, noise at the former 0.01 */
	const double b[] = {100.0}, t[] = {103.4};
	const struct noise_hist h = {30, 0.01, 1000.0};
	struct verdict_config cfg;
	struct verdict_in in = in_of("vm-scalability.throughput", DIR_LOWER, b, 1, t, 1);
	struct verdict_out out;

	cr_expect_float_eq(VERDICT_ALPHA_HISTORY, 0.035, 0);
	in.hist = &h;
	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_str_eq(out.test, "history");
	cr_expect_float_eq(out.p, 0.0182865558689971, 1e-12);
	cr_expect_eq(out.verdict, VERDICT_REGRESSION);
	cr_assert_eq(verdict_config_parse(&cfg, NULL, NULL, 0), 0);
	cfg.alpha_history = 0.01;
	in.cfg = &cfg;
	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_float_eq(out.p, 0.0182865558689971, 1e-12);
	cr_expect_eq(out.verdict, VERDICT_NOISE);
	verdict_config_release(&cfg);
}

Test(verdict, history_guards)
{
	/* the pair is 50x noisier than its history (and 2 of 3 runs are not
	 * "broken runs"): Welch decides instead */
	const double b[] = {95.0, 100.0, 105.0}, t[] = {97.0, 102.0, 107.0};
	const struct noise_hist quiet = {30, 0.001, 60.0};
	struct verdict_in in = in_of("vm-scalability.throughput", DIR_HIGHER, b, 3, t, 3);
	struct verdict_out out;

	in.hist = &quiet;
	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_str_eq(out.test, "welch");
	cr_expect_eq(out.verdict, VERDICT_NOISE);

	/* one broken run (+30%) in the target: set aside (it is 150 sigmas
	 * off), the rest is level with the base: noise, though the mean moved */
	const double b2[] = {100.0, 100.2, 99.8, 100.1}, t2[] = {100.1, 99.9, 100.0, 130.0};
	const struct noise_hist h = {30, 0.002, 60.0};
	in = in_of("vm-scalability.throughput", DIR_HIGHER, b2, 4, t2, 4);
	in.hist = &h;
	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_str_eq(out.test, "history");
	cr_expect(out.p > 0.5, "p %g", out.p);
	/* the reported change is of the plain means */
	cr_expect_float_eq(out.change_pct, 100.0 * (107.5 - 100.025) / 100.025, 1e-9);
	cr_expect_eq(out.verdict, VERDICT_NOISE);

	/* without its broken run (-32%) the target is 3% up, with it the plain
	 * means say 5.3% down: no verdict contradicts the reported change */
	const double t3[] = {103.0, 103.1, 102.9, 70.0};
	in = in_of("vm-scalability.throughput", DIR_HIGHER, b2, 4, t3, 4);
	in.hist = &h;
	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_str_eq(out.test, "history");
	cr_expect(out.p < 1e-6, "p %g", out.p);
	cr_expect(out.change_pct < -5.0);
	cr_expect_eq(out.verdict, VERDICT_NOISE);
}

Test(verdict, bad_input)
{
	const double b[] = {1.0, 2.0, 3.0}, bad[] = {1.0, NAN, 3.0};
	struct verdict_in in = in_of(NULL, DIR_HIGHER, b, 3, b, 3);
	struct verdict_out out;

	cr_expect_eq(verdict_decide(&in, &out), -1);
	cr_expect_eq(out.verdict, VERDICT_NOISE);
	cr_expect_str_eq(out.test, "none");
	in = in_of("x", DIR_HIGHER, b, 0, b, 3);
	cr_expect_eq(verdict_decide(&in, &out), -1);
	in = in_of("x", DIR_HIGHER, b, 3, bad, 3);
	cr_expect_eq(verdict_decide(&in, &out), -1);
	cr_expect_eq(verdict_decide(NULL, &out), -1);
	/* a zero base mean: no percent change, so no relative floor passes */
	const double z[] = {-1.0, 0.0, 1.0}, t[] = {5.0, 6.0, 7.0};
	in = in_of("vm-scalability.throughput", DIR_HIGHER, z, 3, t, 3);
	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect(isnan(out.change_pct));
	cr_expect_eq(out.verdict, VERDICT_NOISE);
}

/* ---- history noise ---------------------------------------------------- */

/* commit i: {L - a, L, L + a}, relative variance (a / L)^2 */
static void make_commit(double *x, double level, double a)
{
	x[0] = level - a;
	x[1] = level;
	x[2] = level + a;
}

Test(verdict, history_noise_constructed)
{
	double v[12][3];
	const double *p[12];
	size_t n[12];
	struct noise_hist h;
	/* every commit at 1%: sigma = 0.01 / sqrt(P(chi2_4 < q)), q the 99.9%
	 * quantile of chi2_2 = -2 ln 0.001, P = 1 - 0.001 (1 + q / 2):
	 * 0.0100397748296786 (the cut's normal-theory correction) */
	const double want = 0.0100397748296786;

	for (int i = 0; i < 12; i++) {
		/* steps between commits (100 -> 200) must not matter */
		make_commit(v[i], i < 6 ? 100.0 : 200.0, i < 6 ? 1.0 : 2.0);
		p[i] = v[i];
		n[i] = 3;
	}
	cr_assert_eq(verdict_noise_from_history(p, n, 8, &h), 0);
	cr_expect_eq(h.ncommits, 8);
	cr_expect_float_eq(h.df, 16.0, 1e-12);
	cr_expect_float_eq(h.sigma_rel, want, 1e-12);

	/* two commits with a broken run: left out, nothing else moves */
	v[3][2] = 130.0;
	v[9][0] = 150.0;
	cr_assert_eq(verdict_noise_from_history(p, n, 12, &h), 0);
	cr_expect_eq(h.ncommits, 12);
	cr_expect_float_eq(h.df, 20.0, 1e-12);
	cr_expect_float_eq(h.sigma_rel, want, 1e-12);

	/* single-run commits do not count: 3 usable commits are too few */
	for (int i = 3; i < 12; i++)
		n[i] = 1;
	cr_expect_eq(verdict_noise_from_history(p, n, 12, &h), -1);
	cr_expect_eq(h.ncommits, 0);
	n[3] = 0;
	p[3] = NULL;
	cr_expect_eq(verdict_noise_from_history(p, n, 12, &h), -1);
	cr_expect_eq(verdict_noise_from_history(NULL, n, 12, &h), -1);
}

Test(verdict, history_noise_mixed_df)
{
	/* commits of 2 and 4 samples, each at exactly the relative variance
	 * 1e-4; none is cut, so sigma^2 = 1e-4 * sum k / sum k P_k with P_k =
	 * P(chi2_{k+2} < chi2_k^-1(0.999)): P_1 = 0.987304215312974,
	 * P_3 = 0.993876330506515 (mpmath), sigma = 0.0100390611715493 */
	double v[6][4];
	const double *p[6];
	size_t n[6];
	struct noise_hist h;

	for (int i = 0; i < 6; i++) {
		p[i] = v[i];
		if (i % 2 == 0) { /* {L - a, L + a}, a = 1/sqrt(2): variance 1 */
			v[i][0] = 100.0 - 1.0 / sqrt(2.0);
			v[i][1] = 100.0 + 1.0 / sqrt(2.0);
			n[i] = 2;
		} else { /* {L - a, L - a, L + a, L + a}, a = sqrt(3)/2: variance 1 */
			double a = sqrt(3.0) / 2.0;

			v[i][0] = v[i][1] = 100.0 - a;
			v[i][2] = v[i][3] = 100.0 + a;
			n[i] = 4;
		}
	}
	cr_assert_eq(verdict_noise_from_history(p, n, 6, &h), 0);
	cr_expect_eq(h.ncommits, 6);
	cr_expect_float_eq(h.df, 12.0, 1e-12);
	cr_expect_float_eq(h.sigma_rel, 0.0100390611715493, 1e-12);
}

/* ---- Benjamini-Hochberg ---------------------------------------------- */

Test(verdict, fdr_by_hand)
{
	static const struct {
		double p[5];
		size_t n;
		double q;
		int keep[5];
	} rows[] = {
	    /* sorted 0.005 0.01 0.03 0.04 against 0.0125 0.025 0.0375 0.05: all */
	    {{0.01, 0.04, 0.03, 0.005}, 4, 0.05, {1, 1, 1, 1}},
	    /* at q = 0.03: 0.0075 0.015 0.0225 0.03: the two smallest */
	    {{0.01, 0.04, 0.03, 0.005}, 4, 0.03, {1, 0, 0, 1}},
	    /* step-up: 0.02 > 0.0125 and 0.03 > 0.025, but 0.035 <= 0.0375 */
	    {{0.02, 0.03, 0.035, 0.5}, 4, 0.05, {1, 1, 1, 0}},
	    /* nothing survives: 0.02 > 0.01, 0.04 > 0.02, ..., 0.9 > 0.05 */
	    {{0.02, 0.04, 0.5, 0.7, 0.9}, 5, 0.05, {0, 0, 0, 0, 0}},
	    /* Bonferroni would keep one; BH keeps both (0.05 <= 0.05) */
	    {{0.025, 0.05}, 2, 0.05, {1, 1}},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		int keep[5] = {7, 7, 7, 7, 7};

		verdict_fdr(rows[i].p, rows[i].n, rows[i].q, keep);
		for (size_t j = 0; j < rows[i].n; j++)
			cr_expect_eq(keep[j], rows[i].keep[j], "row %zu p[%zu]", i, j);
		if (rows[i].n < 5)
			cr_expect_eq(keep[rows[i].n], 7, "row %zu: keep[n] written", i);
	}
}

Test(verdict, fdr_skips_untested)
{
	const double p[] = {0.01, NAN, 0.04, 0.03, NAN, 0.005};
	int keep[] = {9, 9, 9, 9, 9, 9};

	/* m = 4 tested: the first example above, the NaN rows untouched */
	verdict_fdr(p, 6, 0.05, keep);
	cr_expect_eq(keep[0], 1);
	cr_expect_eq(keep[1], 9);
	cr_expect_eq(keep[2], 1);
	cr_expect_eq(keep[3], 1);
	cr_expect_eq(keep[4], 9);
	cr_expect_eq(keep[5], 1);
}

/* ---- configuration ----------------------------------------------------- */

Test(verdict, config_parse)
{
	struct verdict_config c;
	char err[160];

	cr_assert_eq(verdict_config_parse(&c, NULL, err, sizeof(err)), 0);
	cr_expect_eq(c.nrules, 0);
	cr_expect_float_eq(c.floor_perf_pct, 1.0, 0);
	cr_expect_float_eq(c.floor_monitor_pct, 5.0, 0);
	cr_expect_float_eq(c.floor_abs_pp, 1.0, 0);
	cr_expect_float_eq(c.alpha_history, VERDICT_ALPHA_HISTORY, 0);
	verdict_config_release(&c);
	cr_assert_eq(verdict_config_parse(&c, "", err, sizeof(err)), 0);
	cr_expect_eq(c.nrules, 0);

	cr_assert_eq(verdict_config_parse(&c,
	                                  " perf-profile.* = 2pp , proc-vmstat.pgscan_*=10%,"
	                                  "lock_stat.*=3%,default.monitor=7.5%",
	                                  err, sizeof(err)),
	             0, "%s", err);
	cr_assert_eq(c.nrules, 3);
	cr_expect_str_eq(c.rules[0].glob, "perf-profile.*");
	cr_expect_float_eq(c.rules[0].value, 2.0, 0);
	cr_expect_eq(c.rules[0].unit, VERDICT_UNIT_PP);
	cr_expect_str_eq(c.rules[1].glob, "proc-vmstat.pgscan_*");
	cr_expect_float_eq(c.rules[1].value, 10.0, 0);
	cr_expect_eq(c.rules[1].unit, VERDICT_UNIT_PCT);
	cr_expect_str_eq(c.rules[2].glob, "lock_stat.*");
	cr_expect_float_eq(c.floor_monitor_pct, 7.5, 0);
	verdict_config_release(&c);
	cr_expect_eq(c.nrules, 0);
	cr_expect_null(c.rules);
	verdict_config_release(NULL);

	static const struct {
		const char *spec, *msg;
	} bad[] = {
	    {"perf-profile.*", "item 1 \"perf-profile.*\": expected GLOB=VALUE"},
	    {"a=1%,b=3", "item 2 \"b=3\": value needs a unit, '%' or 'pp'"},
	    {"a=x%", "item 1 \"a=x%\": value is not a number"},
	    {"a=-1%", "item 1 \"a=-1%\": value is negative"},
	    {"=1%", "item 1 \"=1%\": empty glob"},
	    {"a=1%,,b=2%", "item 2 \"\": empty item"},
	    {"a=1%,", "item 2 \"\": empty item"},
	    {"default.perf=2pp", "item 1 \"default.perf=2pp\": this default is in '%'"},
	    {"default.absolute=2%", "item 1 \"default.absolute=2%\": this default is in 'pp'"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(verdict_config_parse(&c, bad[i].spec, err, sizeof(err)), -1, "%s",
		             bad[i].spec);
		cr_expect_str_eq(err, bad[i].msg);
		cr_expect_eq(c.nrules, 0);
		cr_expect_float_eq(c.floor_perf_pct, 1.0, 0);
	}
}

/*
 * Archived runs (values gone, moments kept): the history noise of commits
 * summarised equals the one of their values; a pair whose base is archived
 * is decided by Welch's test on the moments (no history test: it cleans the
 * values themselves), with the p-value of the values.
 */
Test(verdict, archived_runs)
{
	double v[12][3];
	const double *p[12], *q[12];
	size_t n[12], m[12];
	struct stats_moments arch[12];
	struct noise_hist h, ha;
	const double b[] = {100.0, 101.0, 99.0}, t[] = {105.0, 106.0, 104.0}, bruns[] = {100.0};
	struct stats_moments bm;
	struct verdict_in in;
	struct verdict_out out;

	for (int i = 0; i < 12; i++) {
		make_commit(v[i], i < 6 ? 100.0 : 200.0, i < 6 ? 1.0 : 2.0);
		p[i] = q[i] = v[i];
		n[i] = m[i] = 3;
		memset(&arch[i], 0, sizeof(arch[i]));
		if (i % 2) { /* every other commit archived: one run of 2, one of 1 */
			struct stats_moments one;
			stats_moments_of(v[i], 2, &arch[i]);
			stats_moments_of(v[i] + 2, 1, &one);
			stats_moments_merge(&arch[i], &one);
			q[i] = NULL;
			m[i] = 0;
		}
	}
	v[3][2] = 130.0; /* a broken run in an archived commit: left out too */
	stats_moments_of(v[3], 3, &arch[3]);
	cr_assert_eq(verdict_noise_from_history(p, n, 12, &h), 0);
	cr_assert_eq(verdict_noise_from_history_ex(q, m, arch, 12, &ha), 0);
	cr_expect_eq(ha.ncommits, h.ncommits);
	cr_expect_float_eq(ha.df, h.df, 1e-12);
	cr_expect_float_eq(ha.sigma_rel, h.sigma_rel, 1e-12);

	/* the welch_decides_with_three_each pair, its base archived as one run */
	stats_moments_of(b, 3, &bm);
	in = in_of("vm-scalability.throughput", DIR_HIGHER, NULL, 0, t, 3);
	in.base_arch = &bm;
	in.base_runs = bruns;
	in.nbr = 1;
	in.hist = &h;
	cr_assert_eq(verdict_decide(&in, &out), 0);
	cr_expect_str_eq(out.test, "welch");
	cr_expect_float_eq(out.p, 0.00360223260910400, 1e-12);
	cr_expect_float_eq(out.change_pct, 5.0, 1e-12);
	cr_expect_eq(out.verdict, VERDICT_IMPROVEMENT);
	/* nothing on either side: no decision */
	in = in_of("vm-scalability.throughput", DIR_HIGHER, NULL, 0, t, 3);
	cr_expect_eq(verdict_decide(&in, &out), -1);
}
