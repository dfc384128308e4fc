/*
 * test_stats.c - descriptive statistics and Welch's t-test against reference
 * values: hand-computed ones, and the R output printed in seed 002 (MGLRU on
 * YCSB/MongoDB), whose raw data is shared/fixtures/mglru-ycsb.json.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "server/stats/stats.h"

/* |got - want| within half a unit of the last digit R printed */
static void expect_printed(double got, double want, double unit, const char *what)
{
	cr_expect(fabs(got - want) <= unit / 2 + unit * 1e-9,
		  "%s: got %.10g, R printed %.10g (to %g)", what, got, want, unit);
}

/* R's format(x, digits = d): d significant digits */
static double sig_unit(double v, int digits)
{
	return pow(10.0, floor(log10(fabs(v))) - digits + 1);
}

Test(stats, descriptive_by_hand)
{
	const double x[] = {4.0, 1.0, 2.0};
	struct stats_desc d;
	double med;

	cr_assert_eq(stats_describe(x, 3, &d), 0);
	cr_expect_eq(d.n, 3);
	cr_expect_eq(d.min, 1.0);
	cr_expect_eq(d.max, 4.0);
	cr_expect_float_eq(d.mean, 7.0 / 3.0, 1e-15);
	cr_expect_float_eq(d.hmean, 3.0 / 1.75, 1e-15);     /* 1.7142857 */
	cr_expect_float_eq(d.gmean, 2.0, 1e-15);            /* cbrt(8) */
	cr_expect_eq(d.median, 2.0);
	cr_expect_float_eq(d.stddev, sqrt(7.0 / 3.0), 1e-15);  /* 1.5275252 */
	cr_expect_float_eq(d.pstddev, sqrt(14.0 / 9.0), 1e-15); /* 1.2472191 */
	cr_expect_float_eq(d.cv, 65.46536707079771, 1e-12);

	const double even[] = {3.0, 9.0, 1.0, 5.0};
	cr_assert_eq(stats_median(even, 4, &med), 0);
	cr_expect_eq(med, 4.0);
	cr_expect_eq(even[0], 3.0, "median must not reorder its input");
}

Test(stats, descriptive_edges)
{
	const double one[] = {5.0};
	const double neg[] = {2.0, -1.0};
	const double zero_mean[] = {-1.0, 1.0};
	const double bad[] = {1.0, NAN};
	struct stats_desc d;
	double med;

	cr_expect(isnan(stats_mean(NULL, 0)));
	cr_expect(isnan(stats_min(NULL, 0)));
	cr_expect_eq(stats_sum(NULL, 0), 0.0);
	cr_expect_eq(stats_median(NULL, 0, &med), -1);
	cr_expect(isnan(stats_stddev(one, 1)));
	cr_expect_eq(stats_pstddev(one, 1), 0.0);
	cr_expect(isnan(stats_cv(one, 1)));
	cr_expect(isnan(stats_hmean(neg, 2)));
	cr_expect(isnan(stats_gmean(neg, 2)));
	cr_expect(isnan(stats_cv(zero_mean, 2)));
	cr_expect_eq(stats_describe(one, 0, &d), -1);
	cr_expect_eq(stats_describe(bad, 2, &d), -1);
}

Test(stats, compensated_sum)
{
	/* naive left-to-right summation gives 0 here; the exact sum is 2 */
	const double x[] = {1.0, 1e100, 1.0, -1e100};

	cr_expect_eq(stats_sum(x, 4), 2.0);
}

Test(stats, t_pvalue_reference)
{
	/* R: 2 * pt(-2.0, 10) = 0.07338803; 2 * pt(-1, 1) = 0.5 */
	expect_printed(stats_t_pvalue(2.0, 10.0), 0.07338803, 1e-8, "p(2, 10)");
	expect_printed(stats_t_pvalue(-1.0, 1.0), 0.5, 1e-12, "p(-1, 1)");
	cr_expect(isnan(stats_t_pvalue(1.0, 0.0)));
}

/* seed 002: a[run, dist, mem, kernel], dist exp/uni/zip, mem 50g/60g */
static const double ycsb[2][2][3][10] = {
	{ /* baseline 5.14 */
		{
			{75814.86, 75884.91, 76052.71, 76621.01, 76641.19, 76661.24, 76870.15, 77017.79, 77289.08, 77302.67},
			{60638.17, 60968.91, 61128.61, 61548.40, 61779.30, 61917.58, 62152.28, 63440.15, 63625.47, 63735.11},
			{91271.16, 91482.41, 91524.17, 92467.16, 92585.62, 92843.29, 92885.65, 93229.98, 93408.94, 93624.08},
		},
		{
			{73183.67, 73191.30, 73527.58, 73831.79, 74047.95, 74056.24, 74401.23, 74418.53, 74547.58, 74643.08},
			{55175.76, 55477.42, 55605.52, 55680.21, 55903.39, 56171.05, 56375.06, 56380.43, 56509.94, 56626.78},
			{92653.82, 92775.02, 93100.44, 93290.21, 93593.74, 93775.64, 93868.72, 93915.12, 94194.77, 94288.69},
		},
	},
	{ /* patched 5.14 + MGLRU */
		{
			{78349.95, 78385.64, 78392.33, 78419.91, 78726.59, 78738.68, 78930.72, 78948.25, 79404.38, 79591.14},
			{66622.91, 66667.33, 66951.43, 67104.80, 67117.30, 67196.90, 67389.75, 67406.62, 68131.43, 68171.61},
			{94261.14, 94822.34, 94914.70, 95114.89, 95156.75, 95205.90, 95383.78, 95612.00, 95624.00, 95648.81},
		},
		{
			{80272.04, 80612.33, 80679.23, 80717.74, 81011.18, 81029.64, 81146.68, 81371.84, 81379.13, 81396.76},
			{67559.52, 67600.11, 67718.90, 68062.57, 68278.78, 68446.56, 68452.82, 68853.86, 69278.34, 69547.67},
			{98706.81, 98864.41, 98903.77, 99044.10, 99155.68, 99162.94, 99165.64, 99482.31, 99484.91, 99540.62},
		},
	},
};

/*
 * One R t.test(x, y) of the seed: x is our base, y our target. R prints
 * t and df to 5 significant digits, p to 4, the CI of mean(x) - mean(y) with
 * the decimals shown, the means to 7 digits; the script prints the CI of the
 * change in percent of mean(x) with %.2f.
 */
struct r_case {
	const char *name;
	int bk, bm, tk, tm, dist; /* base kernel/mem, target kernel/mem */
	double t, df, p;          /* p < 0: R printed "< 2.2e-16" */
	double ci_lo, ci_hi, ci_unit;
	double mean_x, mean_y;
	const char *pct;          /* the script's "[%.2f, %.2f]%" */
};

static const struct r_case r_cases[] = {
	/* Table 1: baseline vs patched */
	{"mem1 dist1", 0, 0, 1, 0, 0, -9.8624, 17.23, 1.671e-08, -2637.627, -1708.769, 1e-3, 76615.56, 78788.76, "[2.23, 3.44]"},
	{"mem1 dist2", 0, 0, 1, 0, 1, -13.081, 12.744, 9.287e-09, -6040.256, -4324.964, 1e-3, 62093.40, 67276.01, "[6.97, 9.73]"},
	{"mem1 dist3", 0, 0, 1, 0, 2, -8.8194, 13.459, 5.833e-07, -3287.17, -1997.20, 1e-2, 92532.25, 95174.43, "[2.16, 3.55]"},
	{"mem2 dist1", 0, 1, 1, 1, 0, -33.368, 16.192, 2.329e-16, -7419.582, -6533.942, 1e-3, 73984.90, 80961.66, "[8.83, 10.03]"},
	{"mem2 dist2", 0, 1, 1, 1, 1, -46.386, 16.338, -1.0, -12954.62, -11824.09, 1e-2, 55990.56, 68379.91, "[21.12, 23.14]"},
	{"mem2 dist3", 0, 1, 1, 1, 2, -27.844, 13.209, 4.049e-13, -6039.729, -5171.275, 1e-3, 93545.62, 99151.12, "[5.53, 6.46]"},
	/* Table 2: underutilizing (50g) vs overcommitting (60g) */
	{"kern1 dist1", 0, 0, 0, 1, 0, 10.87, 18, 2.439e-09, 2122.207, 3139.125, 1e-3, 76615.56, 73984.90, "[-4.10, -2.77]"},
	{"kern1 dist2", 0, 0, 0, 1, 1, 15.593, 12.276, 1.847e-09, 5252.237, 6953.447, 1e-3, 62093.40, 55990.56, "[-11.20, -8.46]"},
	{"kern1 dist3", 0, 0, 0, 1, 2, -3.1512, 15.811, 0.006252, -1695.7509, -330.9911, 1e-4, 92532.25, 93545.62, "[0.36, 1.83]"},
	{"kern2 dist1", 1, 0, 1, 1, 0, -11.836, 17.672, 7.84e-10, -2559.092, -1786.704, 1e-3, 78788.76, 80961.66, "[2.27, 3.25]"},
	{"kern2 dist2", 1, 0, 1, 1, 1, -4.0276, 16.921, 0.0008807, -1682.3864, -525.4236, 1e-4, 67276.01, 68379.91, "[0.78, 2.50]"},
	{"kern2 dist3", 1, 0, 1, 1, 2, -24.26, 15.517, 9.257e-14, -4325.062, -3628.314, 1e-3, 95174.43, 99151.12, "[3.81, 4.54]"},
};

Test(stats, welch_mglru_seed_002)
{
	for (size_t i = 0; i < sizeof(r_cases) / sizeof(r_cases[0]); i++) {
		const struct r_case *c = &r_cases[i];
		const double *x = ycsb[c->bk][c->bm][c->dist];
		const double *y = ycsb[c->tk][c->tm][c->dist];
		struct stats_welch w;
		char pct[64];

		cr_assert_eq(stats_welch(x, 10, y, 10, 0.95, &w), 0, "%s", c->name);

		/* R's t, CI and means are of x - y: ours are of y - x */
		expect_printed(-w.t, c->t, sig_unit(c->t, 5), c->name);
		expect_printed(w.df, c->df, sig_unit(c->df, 5), c->name);
		if (c->p < 0)
			cr_expect(w.p < 2.2e-16, "%s: p %g", c->name, w.p);
		else
			expect_printed(w.p, c->p, sig_unit(c->p, 4), c->name);
		expect_printed(-w.ci_hi, c->ci_lo, c->ci_unit, c->name);
		expect_printed(-w.ci_lo, c->ci_hi, c->ci_unit, c->name);
		expect_printed(w.mean_base, c->mean_x, 0.01, c->name);
		expect_printed(w.mean_target, c->mean_y, 0.01, c->name);

		snprintf(pct, sizeof(pct), "[%.2f, %.2f]", w.ci_lo_pct, w.ci_hi_pct);
		cr_expect_str_eq(pct, c->pct, "%s", c->name);
	}
}

Test(stats, welch_table1_values)
{
	/* the seed's Table 1 prints the CIs of the change in OPS */
	struct stats_welch w;

	cr_assert_eq(stats_welch(ycsb[0][0][0], 10, ycsb[1][0][0], 10, 0.95, &w), 0);
	cr_expect_float_eq(w.ci_lo, 1708.77, 0.006);
	cr_expect_float_eq(w.ci_hi, 2637.63, 0.006);
	cr_assert_eq(stats_welch(ycsb[0][1][1], 10, ycsb[1][1][1], 10, 0.95, &w), 0);
	cr_expect_float_eq(w.ci_lo, 11824.09, 0.006);
	cr_expect_float_eq(w.ci_hi, 12954.62, 0.006);
	cr_expect_float_eq(w.ci_lo_pct, 21.12, 0.005);
	cr_expect_float_eq(w.ci_hi_pct, 23.14, 0.005);
}

Test(stats, welch_other_levels)
{
	/*
	 * Hand case: x = 1..5, y = 3..7: diff 2, se = 1, df = 8.
	 * R: t.test(1:5, 3:7, conf.level = .90)$conf.int = -3.859548 -0.140452
	 * (qt(0.95, 8) = 1.859548), p = 2 * pt(-2, 8) = 0.08051624.
	 */
	const double x[] = {1, 2, 3, 4, 5}, y[] = {3, 4, 5, 6, 7};
	struct stats_welch w;

	cr_assert_eq(stats_welch(x, 5, y, 5, 0.90, &w), 0);
	cr_expect_float_eq(w.diff, 2.0, 1e-12);
	cr_expect_float_eq(w.se, 1.0, 1e-12);
	cr_expect_float_eq(w.df, 8.0, 1e-12);
	expect_printed(w.p, 0.08051624, 1e-8, "p");
	expect_printed(w.ci_lo, 0.140452, 1e-6, "lo");
	expect_printed(w.ci_hi, 3.859548, 1e-6, "hi");
	cr_expect_float_eq(w.ci_lo_pct, 0.140452 * 100 / 3, 1e-4);
	/* 99%: qt(0.995, 8) = 3.355387 */
	cr_assert_eq(stats_welch(x, 5, y, 5, 0.99, &w), 0);
	expect_printed(w.ci_hi, 5.355387, 1e-6, "hi99");
}

Test(stats, welch_refuses)
{
	const double c[] = {5, 5, 5}, x[] = {1, 2, 3};
	struct stats_welch w;

	cr_expect_eq(stats_welch(c, 3, c, 3, 0.95, &w), -1); /* constant data */
	cr_expect_eq(stats_welch(x, 1, x, 3, 0.95, &w), -1);
	cr_expect_eq(stats_welch(x, 3, x, 3, 1.0, &w), -1);
	cr_expect_eq(stats_welch(x, 3, x, 3, 0.0, &w), -1);
	/* one constant side is fine: se comes from the other */
	cr_expect_eq(stats_welch(c, 3, x, 3, 0.95, &w), 0);
	cr_expect_float_eq(w.df, 2.0, 1e-12);
}

/*
 * Moments (what an archived month keeps per run and metric): the seed's
 * 10-value samples cut into runs of 3, 3 and 4, each summarised, then
 * merged, give the figures of the whole sample, and Welch's test on them
 * R's printed t, df, p and CI, as stats_welch on the values does.
 */
static void moments_by_runs(const double *x, struct stats_moments *out)
{
	struct stats_moments part;

	memset(out, 0, sizeof(*out));
	for (size_t at = 0, len = 3; at < 10; at += len, len = at >= 6 ? 4 : 3) {
		stats_moments_of(x + at, len, &part);
		cr_assert_eq(part.n, len);
		stats_moments_merge(out, &part);
	}
}

Test(stats, moments_merged_are_the_whole)
{
	for (size_t k = 0; k < 2; k++)
		for (size_t m = 0; m < 2; m++)
			for (size_t d = 0; d < 3; d++) {
				const double *x = ycsb[k][m][d];
				struct stats_moments mo;

				moments_by_runs(x, &mo);
				cr_assert_eq(mo.n, 10);
				cr_expect_float_eq(mo.mean, stats_mean(x, 10), 1e-12 * stats_mean(x, 10));
				cr_expect_float_eq(stats_moments_stddev(&mo), stats_stddev(x, 10),
						   1e-9 * stats_stddev(x, 10));
				cr_expect_float_eq(stats_moments_cv(&mo), stats_cv(x, 10), 1e-9);
				cr_expect_eq(mo.min, stats_min(x, 10));
				cr_expect_eq(mo.max, stats_max(x, 10));
				cr_expect_float_eq(stats_moments_hmean(&mo), stats_hmean(x, 10),
						   1e-9 * stats_hmean(x, 10));
			}
}

Test(stats, moments_welch_is_r)
{
	for (size_t i = 0; i < sizeof(r_cases) / sizeof(r_cases[0]); i++) {
		const struct r_case *c = &r_cases[i];
		struct stats_moments b, t;
		struct stats_welch w, v;

		moments_by_runs(ycsb[c->bk][c->bm][c->dist], &b);
		moments_by_runs(ycsb[c->tk][c->tm][c->dist], &t);
		cr_assert_eq(stats_welch_moments(&b, &t, 0.95, &w), 0, "%s", c->name);
		cr_assert_eq(stats_welch(ycsb[c->bk][c->bm][c->dist], 10, ycsb[c->tk][c->tm][c->dist],
					 10, 0.95, &v),
			     0);
		expect_printed(-w.t, c->t, sig_unit(c->t, 5), c->name);
		expect_printed(w.df, c->df, sig_unit(c->df, 5), c->name);
		if (c->p >= 0)
			expect_printed(w.p, c->p, sig_unit(c->p, 4), c->name);
		expect_printed(-w.ci_hi, c->ci_lo, c->ci_unit, c->name);
		expect_printed(-w.ci_lo, c->ci_hi, c->ci_unit, c->name);
		cr_expect_float_eq(w.ci_lo, v.ci_lo, 1e-9 * fabs(v.ci_lo), "%s", c->name);
		cr_expect_float_eq(w.p, v.p, 1e-9 * v.p + 1e-300, "%s", c->name);
	}
}

Test(stats, moments_edges)
{
	const double neg[] = {2.0, -1.0, 4.0}, one[] = {7.5};
	struct stats_moments a, b, empty;

	stats_moments_of(NULL, 0, &empty);
	cr_assert_eq(empty.n, 0);
	stats_moments_of(neg, 3, &a);
	cr_expect(isnan(a.rsum), "a value <= 0: no harmonic mean");
	cr_expect(isnan(stats_moments_hmean(&a)));
	stats_moments_of(one, 1, &b);
	cr_expect(isnan(stats_moments_stddev(&b)), "one value: no stddev");
	cr_expect_eq(b.m2, 0.0);
	stats_moments_merge(&b, &empty); /* adding nothing changes nothing */
	cr_expect_eq(b.n, 1);
	cr_expect_eq(b.mean, 7.5);
	stats_moments_merge(&empty, &b); /* into nothing: a copy */
	cr_expect_eq(empty.n, 1);
	cr_expect_eq(empty.mean, 7.5);
	stats_moments_merge(&a, &b); /* 2, -1, 4, 7.5: mean 3.125, variance 38.1875 / 3 */
	cr_expect_float_eq(a.mean, 3.125, 1e-15);
	cr_expect_float_eq(stats_moments_stddev(&a), sqrt(38.1875 / 3.0), 1e-12);
	cr_expect_eq(a.min, -1.0);
	cr_expect_eq(a.max, 7.5);
	cr_expect(isnan(a.rsum));
	cr_expect_eq(stats_welch_moments(&a, &b, 0.95, &(struct stats_welch){0}), -1,
		     "one value on a side: no test");
}
