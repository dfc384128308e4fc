/*
 * test_stats_mmtests.c - the compare-kernels rows and table text against
 * seed 000 (sysbench, 5.9-rc2 vs 5.9-rc2-lru-v18) and hand-computed cases.
 * The seed prints no raw samples; the 12-sample sets below were built offline
 * so that every number of the seed's thread-count-18 rows comes out of them
 * (all 8 rows x 2 kernels and the 8 percentages of each table).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "server/stats/stats_mmtests.h"

/* sysbench Transactions per second, 18 threads (higher is better) */
static const double tps18_base[12] = {
	2538.78, 2183.82, 2679.23, 2261.47, 2400.11, 2616.42,
	2261.49, 2804.87, 3032.30, 2538.79, 2742.05, 2553.58};
static const double tps18_lru[12] = {
	2257.35, 2509.34, 2634.64, 2446.72, 1191.43, 1360.56,
	1307.80, 2283.72, 2697.26, 2810.85, 2571.99, 2230.97};
/* sysbench Time, 18 threads (lower is better) */
static const double time18_base[12] = {
	4.7723, 3.9739, 3.9858, 4.2437, 4.4199, 4.0675,
	3.9819, 4.8220, 3.9779, 3.9699, 4.5961, 3.5400};
static const double time18_lru[12] = {
	4.1294, 4.1460, 4.1377, 4.1953, 8.6434, 3.7998,
	7.6046, 7.6046, 4.1953, 4.1419, 4.1336, 5.9000};

static char *render1(const char *title, enum mmtests_dir dir, const char *k0,
		     const char *k1, const char *op, const double *a, size_t na,
		     const double *b, size_t nb)
{
	const char *kernels[2] = {k0, k1};
	const char *operands[1] = {op};
	const double *samples[2] = {a, b};
	const size_t nsamples[2] = {na, nb};
	struct mmtests_table t = {title, dir, 2, kernels, 1, operands, samples, nsamples, NULL};
	char *out = NULL;
	size_t len = 0;

	cr_assert_eq(mmtests_render(&t, &out, &len), 0);
	cr_assert_not_null(out);
	cr_expect_eq(len, strlen(out));
	return out;
}

Test(mmtests, seed000_tps_18_threads)
{
	char *out = render1(NULL, MMTESTS_HIGHER, "5.9-rc2", "5.9-rc2-lru-v18", "18",
			    tps18_base, 12, tps18_lru, 12);
	const char *want =
		"                            5.9-rc2                5.9-rc2\n"
		"                                                   lru-v18\n"
		"Min       18     2183.82 (   0.00%)     1191.43 ( -45.44%)\n"
		"Hmean     18     2529.10 (   0.00%)     2009.99 * -20.53%*\n"
		"Stddev    18      248.42 (   0.00%)      574.66 (-131.32%)\n"
		"CoeffVar  18        9.74 (   0.00%)       26.22 (-169.23%)\n"
		"Max       18     3032.30 (   0.00%)     2810.85 (  -7.30%)\n"
		"BHmean-50 18     2729.70 (   0.00%)     2606.32 (  -4.52%)\n"
		"BHmean-95 18     2565.99 (   0.00%)     2143.90 ( -16.45%)\n"
		"BHmean-99 18     2565.99 (   0.00%)     2143.90 ( -16.45%)\n";

	cr_expect_str_eq(out, want);
	free(out);
}

Test(mmtests, seed000_time_18_threads)
{
	char *out = render1("sysbench Time", MMTESTS_LOWER, "5.9-rc2", "5.9-rc2-lru",
			    "18", time18_base, 12, time18_lru, 12);
	const char *want =
		"sysbench Time\n"
		"\n"
		"                            5.9-rc2                5.9-rc2\n"
		"                                                       lru\n"
		"Min       18        3.54 (   0.00%)        3.80 (  -7.34%)\n"
		"Amean     18        4.20 (   0.00%)        5.22 * -24.39%*\n"
		"Stddev    18        0.38 (   0.00%)        1.75 (-354.74%)\n"
		"CoeffVar  18        9.15 (   0.00%)       33.45 (-265.58%)\n"
		"Max       18        4.82 (   0.00%)        8.64 ( -79.25%)\n"
		"BAmean-50 18        3.90 (   0.00%)        4.08 (  -4.52%)\n"
		"BAmean-95 18        4.14 (   0.00%)        4.91 ( -18.58%)\n"
		"BAmean-99 18        4.14 (   0.00%)        4.91 ( -18.58%)\n";

	cr_expect_str_eq(out, want);
	free(out);
}

Test(mmtests, seed000_row_layout)
{
	/* numbers as the seed prints them, the layout byte for byte */
	const double v1[2] = {2529.10, 2009.99}, p1[2] = {0.0, -20.53};
	const double v2[2] = {2680.00, 2853.25}, p2[2] = {0.0, 6.46};
	const double v3[2] = {4.63, 4.24}, p3[2] = {0.0, 8.43};
	const int star[2] = {0, 1}, nostar[2] = {0, 0};
	char buf[128];

	cr_expect_eq(mmtests_format_row(buf, sizeof(buf), "Hmean", 9, "18", 2, 2, v1, p1, star), 58);
	cr_expect_str_eq(buf, "Hmean     18     2529.10 (   0.00%)     2009.99 * -20.53%*");
	mmtests_format_row(buf, sizeof(buf), "Min", 9, "12", 2, 2, v2, p2, nostar);
	cr_expect_str_eq(buf, "Min       12     2680.00 (   0.00%)     2853.25 (   6.46%)");
	mmtests_format_row(buf, sizeof(buf), "CoeffVar", 9, "4", 2, 2, v3, p3, NULL);
	cr_expect_str_eq(buf, "CoeffVar  4         4.63 (   0.00%)        4.24 (   8.43%)");
	/* a short buffer is cut and NUL-terminated, the full length returned */
	cr_expect_eq(mmtests_format_row(buf, 10, "Hmean", 9, "18", 2, 2, v1, p1, star), 58);
	cr_expect_str_eq(buf, "Hmean    ");
}

Test(mmtests, seed000_percent_rules)
{
	/* seed rows recomputed from their printed values (pdiff / pndiff) */
	cr_expect_float_eq(mmtests_pct(MMTESTS_MIN, MMTESTS_HIGHER, 2853.25, 2680.00), 6.4645, 1e-4);
	cr_expect_float_eq(mmtests_pct(MMTESTS_STDDEV, MMTESTS_HIGHER, 84.34, 94.94), 11.1650, 1e-4);
	cr_expect_float_eq(mmtests_pct(MMTESTS_MAX, MMTESTS_LOWER, 3.67, 3.89), 5.6555, 1e-4);
	cr_expect_float_eq(mmtests_pct(MMTESTS_MEAN, MMTESTS_LOWER, 5.22, 4.20), -24.2857, 1e-4);
	/* the special cases */
	cr_expect_eq(mmtests_pct(MMTESTS_MEAN, MMTESTS_HIGHER, 5.0, 5.0), 0.0);
	cr_expect_eq(mmtests_pct(MMTESTS_MEAN, MMTESTS_HIGHER, 0.0, 5.0), 0.0);
	cr_expect_eq(mmtests_pct(MMTESTS_MEAN, MMTESTS_HIGHER, 5.0, 0.0), 100.0);
	cr_expect_eq(mmtests_pct(MMTESTS_MEAN, MMTESTS_LOWER, 0.0, 5.0), 100.0);
	cr_expect_eq(mmtests_pct(MMTESTS_MEAN, MMTESTS_LOWER, 5.0, 0.0), -99.0);
	cr_expect_eq(mmtests_pct(MMTESTS_STDDEV, MMTESTS_HIGHER, 0.0, 2.0), 100.0);
	cr_expect_eq(mmtests_pct(MMTESTS_COEFFVAR, MMTESTS_HIGHER, 2.0, 0.0), -99.0);
	cr_expect_eq(mmtests_pct(MMTESTS_COEFFVAR, MMTESTS_LOWER, 1.0, 2.0), 50.0);
	cr_expect(isnan(mmtests_pct(MMTESTS_MIN, MMTESTS_HIGHER, NAN, 1.0)));
}

Test(mmtests, summary_by_hand_higher)
{
	/* best-first {4, 2, 1}: k = 1, 2, 2 for 50, 95, 99 */
	const double x[] = {1.0, 4.0, 2.0};
	struct mmtests_summary s;

	cr_assert_eq(mmtests_summarize(x, 3, MMTESTS_HIGHER, &s), 0);
	cr_expect_eq(s.value[MMTESTS_MIN], 1.0);
	cr_expect_eq(s.value[MMTESTS_MAX], 4.0);
	cr_expect_float_eq(s.value[MMTESTS_MEAN], 3.0 / 1.75, 1e-12);    /* 1.714286 */
	cr_expect_float_eq(s.amean, 7.0 / 3.0, 1e-12);
	cr_expect_float_eq(s.value[MMTESTS_STDDEV], 1.5275252316519468, 1e-12);
	cr_expect_float_eq(s.value[MMTESTS_COEFFVAR], 65.46536707079771, 1e-10);
	cr_expect_eq(s.value[MMTESTS_BMEAN50], 4.0);
	cr_expect_float_eq(s.value[MMTESTS_BMEAN95], 2.0 / 0.75, 1e-12); /* 2.666667 */
	cr_expect_float_eq(s.value[MMTESTS_BMEAN99], 2.0 / 0.75, 1e-12);
	cr_expect_str_eq(mmtests_stat_name(MMTESTS_BMEAN50, MMTESTS_HIGHER), "BHmean-50");
	cr_expect_str_eq(mmtests_stat_name(MMTESTS_MEAN, MMTESTS_HIGHER), "Hmean");
}

Test(mmtests, summary_by_hand_lower)
{
	/* best-first {1, 2, 4}: BAmean-50 = 1, BAmean-95 = 1.5 */
	const double x[] = {4.0, 1.0, 2.0};
	struct mmtests_summary s;

	cr_assert_eq(mmtests_summarize(x, 3, MMTESTS_LOWER, &s), 0);
	cr_expect_eq(s.value[MMTESTS_MIN], 1.0);
	cr_expect_eq(s.value[MMTESTS_MAX], 4.0);
	cr_expect_float_eq(s.value[MMTESTS_MEAN], 7.0 / 3.0, 1e-12);
	cr_expect_eq(s.value[MMTESTS_BMEAN50], 1.0);
	cr_expect_eq(s.value[MMTESTS_BMEAN95], 1.5);
	cr_expect_str_eq(mmtests_stat_name(MMTESTS_BMEAN99, MMTESTS_LOWER), "BAmean-99");
	cr_expect_str_eq(mmtests_stat_name(MMTESTS_MEAN, MMTESTS_LOWER), "Amean");
	/* 12 samples: k = 6, 11, 11 (the seed's BHmean-95 == BHmean-99) */
	cr_assert_eq(mmtests_summarize(time18_base, 12, MMTESTS_LOWER, &s), 0);
	cr_expect_float_eq(s.value[MMTESTS_BMEAN50], 3.9049, 1e-9);
	cr_expect_eq(s.value[MMTESTS_BMEAN95], s.value[MMTESTS_BMEAN99]);
	/* one sample: stddev 0, every B?mean is that sample */
	cr_assert_eq(mmtests_summarize(x, 1, MMTESTS_LOWER, &s), 0);
	cr_expect_eq(s.stddev, 0.0);
	cr_expect_eq(s.value[MMTESTS_BMEAN50], 4.0);
}

Test(mmtests, zero_variance_and_significance)
{
	const double five[] = {5, 5, 5}, six[] = {6, 6, 6};
	char *out;

	/* se == 0: starred iff the means differ */
	out = render1(NULL, MMTESTS_HIGHER, "a", "b", "1", five, 3, six, 3);
	cr_expect(strstr(out, "\nHmean     1        5.00 (   0.00%)        6.00 *  20.00%*\n") != NULL, "%s", out);
	cr_expect(strstr(out, "\nStddev    1        0.00 (   0.00%)        0.00 (   0.00%)\n") != NULL, "%s", out);
	free(out);
	out = render1(NULL, MMTESTS_HIGHER, "a", "b", "1", five, 3, five, 3);
	cr_expect(strstr(out, "\nHmean     1        5.00 (   0.00%)        5.00 (   0.00%)\n") != NULL, "%s", out);
	free(out);
}

Test(mmtests, significance_threshold)
{
	/*
	 * m 10 vs 11, s = 1 both, n = 4 both: t = 1 / sqrt(0.5) = 1.4142,
	 * df 6, p = 0.2070 (R: 2 * pt(-sqrt(2), 6)): not starred.
	 * n = 8: t = 2, df 14, p = 0.0653: starred.
	 */
	struct mmtests_summary b, a;
	const double xb4[] = {9.0, 11.0, 9.0, 11.0}, xa4[] = {10.0, 12.0, 10.0, 12.0};
	const double xb8[] = {9, 11, 9, 11, 9, 11, 9, 11}, xa8[] = {10, 12, 10, 12, 10, 12, 10, 12};

	cr_assert_eq(mmtests_summarize(xb4, 4, MMTESTS_LOWER, &b), 0);
	cr_assert_eq(mmtests_summarize(xa4, 4, MMTESTS_LOWER, &a), 0);
	cr_expect_float_eq(b.stddev, sqrt(4.0 / 3.0), 1e-12);
	cr_expect_eq(mmtests_significant(&b, &a), 0);
	cr_assert_eq(mmtests_summarize(xb8, 8, MMTESTS_LOWER, &b), 0);
	cr_assert_eq(mmtests_summarize(xa8, 8, MMTESTS_LOWER, &a), 0);
	cr_expect_eq(mmtests_significant(&b, &a), 1);
}

Test(mmtests, zero_baseline)
{
	/* lower is better, baseline 0: pndiff gives -99, starred (se == 0) */
	const double zero[] = {0, 0}, one[] = {1, 1};
	char *out = render1(NULL, MMTESTS_LOWER, "base", "new", "1", zero, 2, one, 2);

	cr_expect(strstr(out, "\nAmean     1        0.00 (   0.00%)        1.00 * -99.00%*\n") != NULL, "%s", out);
	cr_expect(strstr(out, "\nMin       1        0.00 (   0.00%)        1.00 ( -99.00%)\n") != NULL, "%s", out);
	free(out);
	/* higher is better, baseline 0 (an invalid Hmean): pdiff gives 100 */
	out = render1(NULL, MMTESTS_HIGHER, "base", "new", "1", zero, 2, one, 2);
	cr_expect(strstr(out, "\nMax       1        0.00 (   0.00%)        1.00 ( 100.00%)\n") != NULL, "%s", out);
	cr_expect(strstr(out, "\nHmean     1        0.00 (   0.00%)        1.00 ( 100.00%)\n") != NULL, "%s", out);
	free(out);
}

Test(mmtests, invalid_hmean)
{
	/* a sample <= 0 makes the Hmean invalid: 0.00 (0.00%), never starred */
	const double bad[] = {0.0, 2.0, 4.0}, good[] = {2.0, 2.0, 4.0};
	struct mmtests_summary s;
	char *out;

	cr_assert_eq(mmtests_summarize(bad, 3, MMTESTS_HIGHER, &s), 0);
	cr_expect_eq(s.valid[MMTESTS_MEAN], 0);
	cr_expect_eq(s.valid[MMTESTS_BMEAN50], 1); /* best one sample: 4 */
	out = render1(NULL, MMTESTS_HIGHER, "good", "bad", "1", good, 3, bad, 3);
	cr_expect(strstr(out, "\nHmean     1        2.40 (   0.00%)        0.00 (   0.00%)\n") != NULL, "%s", out);
	cr_expect(strstr(out, "\nBHmean-50 1        4.00 (   0.00%)        4.00 (   0.00%)\n") != NULL, "%s", out);
	cr_expect(strstr(out, "\nBHmean-95 1        2.67 (   0.00%)        2.67 (   0.00%)\n") != NULL, "%s", out);
	free(out);
}

Test(mmtests, tiny_negative_prints_minus_zero)
{
	const double v[2] = {100.0, 99.999}, p[2] = {0.0, mmtests_pct(MMTESTS_MEAN, MMTESTS_HIGHER, 99.999, 100.0)};
	char buf[128];

	mmtests_format_row(buf, sizeof(buf), "Hmean", 9, "1", 1, 2, v, p, NULL);
	cr_expect_str_eq(buf, "Hmean     1      100.00 (   0.00%)      100.00 (  -0.00%)");
}

Test(mmtests, header_split)
{
	struct {
		const char *name, *head, *tail;
	} c[] = {
		{"5.9-rc2-lru-v18", "5.9-rc2", "lru-v18"},
		{"5.9-rc2", "5.9-rc2", ""},
		{"5.9-rc2-lru", "5.9-rc2", "lru"},
		{"v6.1-lru_gen", "v6.1", "lru_gen"},
		{"5.9-rc10-foo", "5.9-rc1", "-foo"}, /* mmtests cuts -rc10 oddly */
		{"mglru", "mglru", ""},
		{"5.14-", "5.14", ""},
	};

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		size_t head;
		const char *tail;

		mmtests_split_name(c[i].name, &head, &tail);
		cr_expect_eq(head, strlen(c[i].head), "%s", c[i].name);
		cr_expect(strncmp(c[i].name, c[i].head, head) == 0, "%s", c[i].name);
		cr_expect_str_eq(tail, c[i].tail, "%s", c[i].name);
	}
	cr_expect_str_eq(mmtests_default_operand("readtwice.throughput"), "throughput");
	cr_expect_str_eq(mmtests_default_operand("plain"), "plain");
}

Test(mmtests, operands_in_numeric_order_three_kernels)
{
	/* operands given as "18", "4", "1"; printed 1, 4, 18; W2 = 2 */
	const char *kernels[3] = {"5.9-rc2", "5.9-rc2-lru-v18", "v6.1"};
	const char *operands[3] = {"18", "4", "1"};
	const double a[] = {10.0}, b[] = {20.0}, c[] = {5.0};
	const double *samples[9] = {a, b, c, a, b, c, a, b, c};
	const size_t nsamples[9] = {1, 1, 1, 1, 1, 1, 1, 1, 0};
	struct mmtests_table t = {NULL, MMTESTS_HIGHER, 3, kernels, 3, operands, samples, nsamples, NULL};
	char *out;
	const char *want =
		"                            5.9-rc2                5.9-rc2                   v6.1\n"
		"                                                   lru-v18                       \n"
		"Min       1        10.00 (   0.00%)       20.00 ( 100.00%)         NaN (    NaN%)\n"
		"Min       4        10.00 (   0.00%)       20.00 ( 100.00%)        5.00 ( -50.00%)\n"
		"Min       18       10.00 (   0.00%)       20.00 ( 100.00%)        5.00 ( -50.00%)\n"
		"Hmean     1        10.00 (   0.00%)       20.00 * 100.00%*         NaN (    NaN%)\n";

	cr_assert_eq(mmtests_render(&t, &out, NULL), 0);
	cr_expect(strncmp(out, want, strlen(want)) == 0, "%s", out);
	cr_expect(strstr(out, "Hmean     4        10.00 (   0.00%)       20.00 * 100.00%*        5.00 * -50.00%*\n") != NULL, "%s", out);
	free(out);
}

Test(mmtests, bad_input)
{
	const char *kernels[1] = {"a"};
	const char *operands[1] = {"1"};
	const double x[] = {1.0, INFINITY};
	const double *samples[1] = {x};
	const size_t nsamples[1] = {2};
	struct mmtests_table t = {NULL, MMTESTS_HIGHER, 1, kernels, 1, operands, samples, nsamples, NULL};
	struct mmtests_summary s;
	char *out = (char *)1;

	cr_expect_eq(mmtests_summarize(x, 0, MMTESTS_HIGHER, &s), -1);
	cr_expect_eq(mmtests_render(&t, &out, NULL), -1);
	cr_expect_null(out);
	t.nkernels = 0;
	cr_expect_eq(mmtests_render(&t, &out, NULL), -1);
}

/*
 * The seed's 18-thread table with the target kernel's 12 runs archived
 * (four runs of three values, kept as moments): every row the seed prints,
 * the star included, but the B?mean rows, which need the values: NaN.
 */
Test(mmtests, seed000_archived_target)
{
	const char *kernels[2] = {"5.9-rc2", "5.9-rc2-lru-v18"};
	const char *operands[1] = {"18"};
	const double *samples[2] = {tps18_base, NULL};
	const size_t nsamples[2] = {12, 0};
	struct stats_moments arch, run;
	const struct stats_moments *archived[2] = {NULL, &arch};
	struct mmtests_table t = {NULL, MMTESTS_HIGHER, 2, kernels, 1, operands,
				  samples, nsamples, archived};
	char *out = NULL;
	const char *want =
		"                            5.9-rc2                5.9-rc2\n"
		"                                                   lru-v18\n"
		"Min       18     2183.82 (   0.00%)     1191.43 ( -45.44%)\n"
		"Hmean     18     2529.10 (   0.00%)     2009.99 * -20.53%*\n"
		"Stddev    18      248.42 (   0.00%)      574.66 (-131.32%)\n"
		"CoeffVar  18        9.74 (   0.00%)       26.22 (-169.23%)\n"
		"Max       18     3032.30 (   0.00%)     2810.85 (  -7.30%)\n"
		"BHmean-50 18     2729.70 (   0.00%)         NaN (    NaN%)\n"
		"BHmean-95 18     2565.99 (   0.00%)         NaN (    NaN%)\n"
		"BHmean-99 18     2565.99 (   0.00%)         NaN (    NaN%)\n";

	memset(&arch, 0, sizeof(arch));
	for (int i = 0; i < 12; i += 3) {
		stats_moments_of(tps18_lru + i, 3, &run);
		stats_moments_merge(&arch, &run);
	}
	cr_assert_eq(mmtests_render(&t, &out, NULL), 0);
	cr_expect_str_eq(out, want);
	free(out);
}
