/*
 * test_stats_lkp.c - LKP's changed-stat rule, number formats, rows, row order
 * and block text, on crafted runs and the numbers of seeds 003 (vm-scalability
 * -11.5%) and 004 (memtier, lru_lock contention 13.11 -> 1.79), per
 * specs/lkp-compare.md.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "server/stats/stats_lkp.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static int changed(const char *name, const double *b, size_t nb, const double *a, size_t na)
{
	return lkp_changed(name, NULL, b, nb, nb, a, na, na);
}

static const char *fixed(double v, int prec)
{
	static char buf[64];

	cr_assert(lkp_format_fixed(buf, sizeof(buf), v, prec) > 0);
	return buf;
}

Test(lkp, ruby_tie_rounding)
{
	/* the spec's examples: ties of the decimal spelling go to even */
	cr_expect_str_eq(fixed(0.665, 2), "0.66");   /* C's printf gives 0.67 */
	cr_expect_str_eq(fixed(200.575, 2), "200.58"); /* C's printf gives 200.57 */
	cr_expect_str_eq(fixed(2.695, 2), "2.70");
	cr_expect_str_eq(fixed(2.675, 2), "2.68");   /* C: 2.67 */
	cr_expect_str_eq(fixed(1.005, 2), "1.00");
	cr_expect_str_eq(fixed(0.125, 2), "0.12");
	cr_expect_str_eq(fixed(0.375, 2), "0.38");
	cr_expect_str_eq(fixed(9.995, 2), "10.00");  /* carry into a new digit */
	cr_expect_str_eq(fixed(-0.665, 2), "-0.66");
	cr_expect_str_eq(fixed(0.6651, 2), "0.67");  /* not a tie */
	cr_expect_str_eq(fixed(0.35, 1), "0.4");
	cr_expect_str_eq(fixed(0.25, 1), "0.2");
	cr_expect_str_eq(fixed(-11.25, 1), "-11.2");
	cr_expect_str_eq(fixed(2.5, 0), "2");
	cr_expect_str_eq(fixed(3.5, 0), "4");
	cr_expect_str_eq(fixed(0.004, 2), "0.00");
	cr_expect_str_eq(fixed(-0.004, 2), "-0.00");
	cr_expect_str_eq(fixed(0.0, 2), "0.00");
	cr_expect_str_eq(fixed(20717269.0, 2), "20717269.00");
	cr_expect_str_eq(fixed(1e-7, 2), "0.00");
	cr_expect_str_eq(fixed(0.005, 2), "0.00");   /* tie, 0 is even */
	cr_expect_str_eq(fixed(0.015, 2), "0.02");
}

Test(lkp, value_column)
{
	char b[32];

	lkp_format_value(b, sizeof(b), 0.23);
	cr_expect_str_eq(b, "      0.23");
	lkp_format_value(b, sizeof(b), 376.47);
	cr_expect_str_eq(b, "    376.47");
	lkp_format_value(b, sizeof(b), 0.665);
	cr_expect_str_eq(b, "      0.66");
	lkp_format_value(b, sizeof(b), 999.999);
	cr_expect_str_eq(b, "   1000.00");
	lkp_format_value(b, sizeof(b), 1000.0);
	cr_expect_str_eq(b, "      1000");
	lkp_format_value(b, sizeof(b), 103991.75); /* truncated, as Ruby's %d of a Float */
	cr_expect_str_eq(b, "    103991");
	lkp_format_value(b, sizeof(b), 20717269.0);
	cr_expect_str_eq(b, "  20717269");
	lkp_format_value(b, sizeof(b), -6253423.5);
	cr_expect_str_eq(b, "  -6253423");
	lkp_format_value(b, sizeof(b), 100000000.0);
	cr_expect_str_eq(b, " 100000000");
	lkp_format_value(b, sizeof(b), 1.603e9);   /* seed 003: proc-vmstat.pgscan_direct */
	cr_expect_str_eq(b, " 1.603e+09");
	lkp_format_value(b, sizeof(b), 1.56e9);
	cr_expect_str_eq(b, "  1.56e+09");
	lkp_format_value(b, sizeof(b), 2.935e8);   /* seed 003: pgscan_kswapd */
	cr_expect_str_eq(b, " 2.935e+08");
	lkp_format_value(b, sizeof(b), 3.32e8);
	cr_expect_str_eq(b, "  3.32e+08");
	lkp_format_value(b, sizeof(b), 123456789.0);
	cr_expect_str_eq(b, " 1.235e+08");
	lkp_format_value(b, sizeof(b), 1.2345e8);  /* a 4-digit tie, 4 is even */
	cr_expect_str_eq(b, " 1.234e+08");
	lkp_format_value(b, sizeof(b), -2.5e9);
	cr_expect_str_eq(b, "  -2.5e+09");
}

Test(lkp, change_and_stddev_columns)
{
	char b[32];

	lkp_format_change(b, sizeof(b), 11.7, 0);
	cr_expect_str_eq(b, "     +11.7%");
	lkp_format_change(b, sizeof(b), -11.4935, 0);
	cr_expect_str_eq(b, "     -11.5%");
	lkp_format_change(b, sizeof(b), 233.3, 0);
	cr_expect_str_eq(b, "    +233.3%");
	lkp_format_change(b, sizeof(b), 0.0, 0);
	cr_expect_str_eq(b, "      +0.0%");
	lkp_format_change(b, sizeof(b), -0.53, 1);  /* absolute: a blank for the % */
	cr_expect_str_eq(b, "      -0.5 ");
	lkp_format_change(b, sizeof(b), -11.32, 1);
	cr_expect_str_eq(b, "     -11.3 ");
	lkp_format_change(b, sizeof(b), 123456.0, 0); /* %+10.2g from 100000 on */
	cr_expect_str_eq(b, "  +1.2e+05%");
	lkp_format_change(b, sizeof(b), 1e102, 0);    /* zero base: 100 * x / 1e-100 */
	cr_expect_str_eq(b, "   +1e+102%");

	lkp_format_stddev(b, sizeof(b), 2.0);
	cr_expect_str_eq(b, "      ");
	lkp_format_stddev(b, sizeof(b), 2.01);
	cr_expect_str_eq(b, " \xc2\xb1  2%");
	lkp_format_stddev(b, sizeof(b), 2.99);
	cr_expect_str_eq(b, " \xc2\xb1  2%");
	lkp_format_stddev(b, sizeof(b), 173.9);
	cr_expect_str_eq(b, " \xc2\xb1" "173%");
	lkp_format_stddev(b, sizeof(b), NAN);
	cr_expect_str_eq(b, "      ");
}

/* a row with the seed's printed numbers; one target */
static const char *row1(const char *name, double b, double bsd, double change, double a, double asd)
{
	static char buf[512];
	struct lkp_row r;

	memset(&r, 0, sizeof(r));
	r.name = name;
	r.ncols = 2;
	r.absolute = lkp_is_absolute(name);
	r.mean[0] = b;
	r.mean[1] = a;
	r.stddev_pct[0] = bsd;
	r.stddev_pct[1] = asd;
	r.change[1] = change;
	cr_assert(lkp_row_format(&r, buf, sizeof(buf)) > 0);
	return buf;
}

Test(lkp, seed_rows_layout)
{
	/* seed 003 lines (mail lost its trailing blanks and shows ± as Â) */
	cr_expect_str_eq(row1("vm-scalability.free_time", 0.23, 2.5, 11.7, 0.26, NAN),
			 "      0.23 \xc2\xb1  2%     +11.7%       0.26        vm-scalability.free_time\n");
	cr_expect_str_eq(row1("vm-scalability.throughput", 20717269, 0.5, -11.5, 18336098, 1),
			 "  20717269           -11.5%   18336098        vm-scalability.throughput\n");
	cr_expect_str_eq(row1("meminfo.DirectMap2M", 52662860, 5.4, -14.0, 45266760, 5.9),
			 "  52662860 \xc2\xb1  5%     -14.0%   45266760 \xc2\xb1  5%  meminfo.DirectMap2M\n");
	cr_expect_str_eq(row1("mpstat.cpu.all.usr%", 4.43, NAN, -0.53, 3.90, 2.3),
			 "      4.43            -0.5        3.90 \xc2\xb1  2%  mpstat.cpu.all.usr%\n");
	cr_expect_str_eq(row1("numa-meminfo.node1.AnonHugePages", 54428, 60.2, -96.5, 1895, 173.2),
			 "     54428 \xc2\xb1 60%     -96.5%       1895 \xc2\xb1" "173%  numa-meminfo.node1.AnonHugePages\n");
	cr_expect_str_eq(row1("sched_debug.cfs_rq:/.spread0.min", -6253423, -10, -61.1, -2430118, -20),
			 "  -6253423           -61.1%   -2430118        sched_debug.cfs_rq:/.spread0.min\n");
	cr_expect_str_eq(row1("proc-vmstat.pgscan_kswapd", 2.935e8, 3.1, 13.1, 3.32e8, 2.2),
			 " 2.935e+08 \xc2\xb1  3%     +13.1%   3.32e+08 \xc2\xb1  2%  proc-vmstat.pgscan_kswapd\n");
	/* seed 004: the lru_lock row, an absolute change */
	cr_expect_str_eq(row1("perf-profile.calltrace.cycles-pp._raw_spin_lock_irqsave.folio_lruvec_lock_irqsave."
			      "folio_batch_move_lru.folio_add_lru_vma.do_anonymous_page", 13.11, NAN, -11.32, 1.79, NAN),
			 "     13.11           -11.3        1.79        perf-profile.calltrace.cycles-pp."
			 "_raw_spin_lock_irqsave.folio_lruvec_lock_irqsave.folio_batch_move_lru."
			 "folio_add_lru_vma.do_anonymous_page\n");
	cr_expect_str_eq(row1("memtier.avg_gets_avg_latency_ms", 117.24, NAN, -2.1, 114.73, NAN),
			 "    117.24            -2.1%     114.73        memtier.avg_gets_avg_latency_ms\n");
	cr_expect_str_eq(row1("memtier.total_sets_kb/s", 32168738, NAN, 2.9, 33105003, NAN),
			 "  32168738            +2.9%   33105003        memtier.total_sets_kb/s\n");
}

Test(lkp, row_compute)
{
	/* free_time: runs crafted to print as seed 003 does */
	const double b[] = {0.2268, 0.2388, 0.2268, 0.2388}, a[] = {0.26004, 0.26004, 0.26004, 0.26004};
	const double *v[2] = {b, a};
	const size_t n[2] = {4, 4}, runs[2] = {4, 4};
	struct lkp_row r;
	char buf[256];

	cr_assert_eq(lkp_row_compute(&r, "vm-scalability.free_time", 2, v, n, runs), 0);
	cr_expect_float_eq(r.mean[0], 0.2328, 1e-15);
	cr_expect_float_eq(r.stddev_pct[0], 0.006 * 100 / 0.2328, 1e-9); /* 2.577%: population */
	cr_expect_float_eq(r.stddev_pct[1], 0.0, 1e-9);
	cr_expect_float_eq(r.change[1], 100 * (0.26004 - 0.2328) / 0.2328, 1e-9); /* 11.70 */
	cr_assert(lkp_row_format(&r, buf, sizeof(buf)) > 0);
	cr_expect_str_eq(buf, "      0.23 \xc2\xb1  2%     +11.7%       0.26        vm-scalability.free_time\n");

	/* absolute: mean difference; a single run has no ± column */
	const double pb[] = {13.11}, pa[] = {1.79};
	const double *pv[2] = {pb, pa};
	const size_t pn[2] = {1, 1};
	cr_assert_eq(lkp_row_compute(&r, "perf-profile.self.x", 2, pv, pn, NULL), 0);
	cr_expect_eq(r.absolute, 1);
	cr_expect_float_eq(r.change[1], -11.32, 1e-12);
	cr_expect(isnan(r.stddev_pct[0]));

	/* a zero base mean is replaced by 1e-100; an absent side is 0 (-100%) */
	const double z[] = {0, 0, 0}, one[] = {1, 1, 1};
	const double *zv[3] = {z, one, NULL};
	const size_t zn[3] = {3, 3, 0};
	cr_assert_eq(lkp_row_compute(&r, "sched_debug.x", 3, zv, zn, NULL), 0);
	cr_expect_float_eq(r.change[1], 1e102, 1e88);
	const double *zv2[2] = {one, NULL};
	const size_t zn2[2] = {3, 0};
	cr_assert_eq(lkp_row_compute(&r, "sched_debug.x", 2, zv2, zn2, NULL), 0);
	cr_expect_eq(r.change[1], -100.0);
	cr_assert(lkp_row_format(&r, buf, sizeof(buf)) > 0);
	cr_expect_str_eq(buf, "      1.00          -100.0%       0.00        sched_debug.x\n");
}

Test(lkp, failure_rows)
{
	const double b[] = {0, 0, 0, 0}, a[] = {1, 0, 1, 0};
	const double *v[2] = {b, a};
	const size_t n[2] = {4, 4}, runs[2] = {4, 4};
	struct lkp_row r;
	char buf[256];

	cr_expect_eq(lkp_is_failure("dmesg.WARNING:at_mm/vmscan.c"), 1);
	cr_expect_eq(lkp_is_failure("last_state.is_incomplete_run"), 1);
	cr_expect_eq(lkp_is_failure("kernel-selftests.vm.run_vmtests.fail"), 1);
	cr_expect_eq(lkp_is_failure("vm-scalability.throughput"), 0);
	cr_assert_eq(lkp_row_compute(&r, "dmesg.WARNING:at_mm/vmscan.c", 2, v, n, runs), 0);
	cr_expect_eq(r.failure, 1);
	cr_expect_float_eq(r.change[1], 50.0, 1e-12);
	cr_assert(lkp_row_format(&r, buf, sizeof(buf)) > 0);
	cr_expect_str_eq(buf, "           :4           50%           2:4     dmesg.WARNING:at_mm/vmscan.c\n");

	/* LKP divides both by the base's run count: 2 of 6 vs 1 of 3 -> +33% */
	const double b3[] = {1, 0, 0}, a6[] = {1, 1, 0, 0, 0, 0};
	const double *v2[2] = {b3, a6};
	const size_t n2[2] = {3, 6}, runs2[2] = {3, 6};
	cr_assert_eq(lkp_row_compute(&r, "dmesg.BUG", 2, v2, n2, runs2), 0);
	cr_expect_float_eq(r.change[1], 100.0 * (2.0 / 3 - 1.0 / 3), 1e-9); /* 33% */

	cr_expect_eq(changed("dmesg.BUG", b, 4, a, 4), 1);
	cr_expect_eq(changed("dmesg.BUG", b, 4, b, 4), 0);
}

Test(lkp, rule_needs_three_runs)
{
	const double b[] = {1, 1}, a[] = {10, 10}, b3[] = {1, 1, 1}, a3[] = {10, 10, 10};

	cr_expect_eq(changed("vm-scalability.throughput", b, 2, a, 2), 0);
	cr_expect_eq(changed("vm-scalability.throughput", b3, 3, a, 2), 1);
	cr_expect_eq(changed("vm-scalability.throughput", b, 2, a3, 3), 1);
}

Test(lkp, rule_upper_median_and_overlap)
{
	struct lkp_range r;
	const double even[] = {4, 1, 3, 2};
	/* upper median: A's is 13 > B.max 12; the lower one (11) would not be */
	const double b[] = {10, 10, 10, 12}, a[] = {11, 13, 11, 13};
	/* ranges that overlap: nobody is entirely beyond the other's median */
	const double ob[] = {10, 10, 10}, oa[] = {9, 11, 12};

	cr_assert_eq(lkp_range(even, 4, &r), 0);
	cr_expect_eq(r.median, 3.0);
	cr_expect_eq(r.min, 1.0);
	cr_expect_eq(r.max, 4.0);
	cr_expect_eq(changed("vm-scalability.throughput", b, 4, a, 4), 1);
	cr_expect_eq(changed("vm-scalability.throughput", a, 4, b, 4), 1); /* the other way */
	cr_expect_eq(changed("vm-scalability.throughput", ob, 3, oa, 3), 0);
}

Test(lkp, rule_trimming)
{
	double b[200], a[200];
	struct lkp_range r;

	for (size_t i = 0; i < 200; i++) {
		b[i] = 100;
		a[i] = 120;
	}
	/* 31 runs: no trimming, one outlier in B hides the change */
	b[0] = 1000;
	cr_expect_eq(changed("vm-scalability.throughput", b, 31, a, 31), 0);
	/* 32 runs: 32 >> 5 = 1 run dropped from each end */
	cr_assert_eq(lkp_range(b, 32, &r), 0);
	cr_expect_eq(r.n, 30);
	cr_expect_eq(r.max, 100.0);
	cr_expect_eq(changed("vm-scalability.throughput", b, 32, a, 32), 1);
	/* 200 runs: 6 would be dropped, but at most 3 are */
	cr_assert_eq(lkp_range(b, 200, &r), 0);
	cr_expect_eq(r.n, 194);
	b[1] = b[2] = 1000;
	cr_expect_eq(changed("vm-scalability.throughput", b, 200, a, 200), 1);
	b[3] = 1000;
	cr_expect_eq(changed("vm-scalability.throughput", b, 200, a, 200), 0);
}

Test(lkp, rule_small_change_filter)
{
	const double b[] = {100, 100, 100}, a101[] = {101, 101, 101}, a102[] = {102, 102, 102},
		     a106[] = {106, 106, 106}, zero[] = {0, 0, 0}, five[] = {5, 5, 5};
	const double p1[] = {10.0, 10.0, 10.0}, p2[] = {10.05, 10.05, 10.05};

	/* ratio must be > 1.01 for everybody but perf-profile */
	cr_expect_eq(changed("vm-scalability.throughput", b, 3, a101, 3), 0);
	cr_expect_eq(changed("vm-scalability.throughput", b, 3, a102, 3), 1);
	cr_expect_eq(changed("perf-profile.self.x", p1, 3, p2, 3), 1);
	/* > 1.05 unless a performance metric */
	cr_expect_eq(changed("sched_debug.cpu.nr_switches", b, 3, a102, 3), 0);
	cr_expect_eq(changed("sched_debug.cpu.nr_switches", b, 3, a106, 3), 1);
	cr_expect_eq(changed("perf-stat.ipc", b, 3, a102, 3), 1);
	cr_expect_eq(changed("vmstat.cpu.sy", b, 3, a102, 3), 1);
	cr_expect_eq(changed("vmstat.procs.r", b, 3, a102, 3), 0);
	cr_expect_eq(changed("iostat.sda.util", b, 3, a102, 3), 1);
	cr_expect_eq(changed("memtier.time.user_time", b, 3, a102, 3), 1);
	cr_expect_eq(lkp_changed("mybench.score", NULL, b, 3, 3, a102, 3, 3), 0);
	cr_expect_eq(lkp_changed("mybench.score", "mybench", b, 3, 3, a102, 3, 3), 1);
	/* the smaller median <= 0: ratio 5 */
	cr_expect_eq(changed("sched_debug.cpu.nr_switches", zero, 3, five, 3), 1);

	cr_expect_eq(lkp_is_perf_metric("lock_stat.&lruvec->lru_lock.contentions", NULL), 1);
	cr_expect_eq(lkp_is_perf_metric("lock_stat.&lruvec->lru_lock.holdtime-total", NULL), 0);
	cr_expect_eq(lkp_is_perf_metric("time.elapsed_time", NULL), 1);
	cr_expect_eq(lkp_is_perf_metric("will-it-scale.per_process_ops", NULL), 1);
	cr_expect_eq(lkp_is_perf_metric("meminfo.Active", NULL), 0);
}

Test(lkp, rule_floors)
{
#define F(name, bv, av) changed(name, (const double[]){bv, bv, bv}, 3, (const double[]){av, av, av}, 3)
	/* *vmstat*nr_*: max >= 100 (first match, also for proc-vmstat.nr_*) */
	cr_expect_eq(F("numa-vmstat.node0.nr_isolated_file", 80, 99), 0);
	cr_expect_eq(F("numa-vmstat.node0.nr_isolated_file", 80, 100), 1);
	cr_expect_eq(F("proc-vmstat.nr_mapped", 90, 150), 1);
	/* proc-vmstat.*, *meminfo*: max > 1000 */
	cr_expect_eq(F("proc-vmstat.pgactivate", 900, 1000), 0);
	cr_expect_eq(F("proc-vmstat.pgactivate", 900, 1001), 1);
	cr_expect_eq(F("numa-meminfo.node1.AnonPages", 500, 1000), 0);
	cr_expect_eq(F("numa-meminfo.node1.AnonPages", 500, 1001), 1);
	/* lock_stat.*: delta > 10000, > 1000 with "time" in the name */
	cr_expect_eq(F("lock_stat.&lruvec->lru_lock.contentions", 50000, 60000), 0);
	cr_expect_eq(F("lock_stat.&lruvec->lru_lock.contentions", 50000, 60001), 1);
	cr_expect_eq(F("lock_stat.&lruvec->lru_lock.waittime-total", 5000, 6000), 0);
	cr_expect_eq(F("lock_stat.&lruvec->lru_lock.waittime-total", 5000, 6001), 1);
	/* interrupts.*, softirqs.*: max > 10000 */
	cr_expect_eq(F("interrupts.CAL:Function_call_interrupts", 5000, 10000), 0);
	cr_expect_eq(F("interrupts.CAL:Function_call_interrupts", 5000, 10001), 1);
	cr_expect_eq(F("softirqs.RCU", 20000, 5000), 1);
	cr_expect_eq(F("softirqs.RCU", 9000, 5000), 0);
	/* *.time.elapsed_time*: max >= 10 and delta >= 5 */
	cr_expect_eq(F("vm-scalability.time.elapsed_time", 5, 9.9), 0);
	cr_expect_eq(F("vm-scalability.time.elapsed_time.max", 6, 10), 0);
	cr_expect_eq(F("vm-scalability.time.elapsed_time", 5, 10), 1);
	/* floors do not apply to perf-profile */
	cr_expect_eq(F("perf-profile.children.cycles-pp.folio_lruvec_lock_irqsave", 0.5, 0.7), 1);
#undef F
}

Test(lkp, rule_one_sided)
{
	const double b[] = {100, 100, 100}, pp4[] = {4, 4, 4}, pp6[] = {6, 6, 6},
		     lock[] = {50000, 50000, 50000}, p3[] = {3, 3, 3};

	/* only in B: A is zeros */
	cr_expect_eq(lkp_changed("vm-scalability.throughput", NULL, b, 3, 3, NULL, 0, 3), 1);
	/* only in A: ignored, except perf-profile.* and lock_stat.* */
	cr_expect_eq(lkp_changed("proc-vmstat.pgfree", NULL, NULL, 0, 3, lock, 3, 3), 0);
	cr_expect_eq(lkp_changed("lock_stat.&lruvec->lru_lock.contentions", NULL, NULL, 0, 3, lock, 3, 3), 1);
	cr_expect_eq(lkp_changed("perf-profile.self.x", NULL, NULL, 0, 3, p3, 3, 3), 1);
	/* perf-profile gone from A: shown only when B's median exceeds 5 */
	cr_expect_eq(lkp_changed("perf-profile.self.x", NULL, pp4, 3, 3, NULL, 0, 3), 0);
	cr_expect_eq(lkp_changed("perf-profile.self.x", NULL, pp6, 3, 3, NULL, 0, 3), 1);
	/* absent on both sides */
	cr_expect_eq(lkp_changed("perf-profile.self.x", NULL, NULL, 0, 3, NULL, 0, 3), 0);
	/* a side's missing runs count as zeros: B = {10, 10, 0} overlaps A = {5, 5, 5} */
	cr_expect_eq(lkp_changed("sched_debug.x", NULL, (const double[]){10, 10}, 2, 3,
				 (const double[]){5, 5, 5}, 3, 3), 0);
	cr_expect_eq(lkp_changed("sched_debug.x", NULL, (const double[]){10, 10, 10}, 3, 3,
				 (const double[]){5, 5, 5}, 3, 3), 1);
}

Test(lkp, row_order_seed_003)
{
	/* seed 003's rows, in its order */
	const char *want[] = {
		"vm-scalability.free_time",
		"vm-scalability.median",
		"vm-scalability.throughput",
		"vm-scalability.time.elapsed_time",
		"vm-scalability.time.elapsed_time.max",
		"vm-scalability.time.involuntary_context_switches",
		"vm-scalability.time.percent_of_cpu_this_job_got",
		"vm-scalability.time.system_time",
		"vm-scalability.time.user_time",
		"meminfo.DirectMap2M",
		"mpstat.cpu.all.usr%",
		"slabinfo.kmalloc-rcl-96.active_objs",
		"slabinfo.kmalloc-rcl-96.num_objs",
		"vmstat.cpu.id",
		"vmstat.cpu.sy",
		"numa-meminfo.node1.AnonHugePages",
		"numa-meminfo.node1.AnonPages",
		"numa-meminfo.node3.Inactive(anon)",
		"numa-vmstat.node0.nr_isolated_file",
		"numa-vmstat.node1.nr_anon_pages",
		"numa-vmstat.node2.numa_foreign",
		"numa-vmstat.node3.nr_inactive_anon",
		"numa-vmstat.node3.nr_zone_inactive_anon",
		"sched_debug.cfs_rq:/.load_avg.avg",
		"sched_debug.cfs_rq:/.load_avg.stddev",
		"sched_debug.cfs_rq:/.nr_spread_over.avg",
		"sched_debug.cfs_rq:/.spread0.avg",
		"sched_debug.cfs_rq:/.spread0.max",
		"sched_debug.cfs_rq:/.spread0.min",
		"sched_debug.cpu.sched_goidle.avg",
		"sched_debug.cpu.sched_goidle.max",
		"sched_debug.cpu.sched_goidle.min",
		"sched_debug.cpu.sched_goidle.stddev",
		"proc-vmstat.kswapd_low_wmark_hit_quickly",
		"proc-vmstat.nr_active_anon",
		"proc-vmstat.nr_isolated_file",
		"proc-vmstat.nr_mapped",
		"proc-vmstat.nr_page_table_pages",
		"proc-vmstat.nr_shmem",
		"proc-vmstat.nr_zone_active_anon",
		"proc-vmstat.numa_hint_faults",
		"proc-vmstat.pageoutrun",
		"proc-vmstat.pgactivate",
		"proc-vmstat.pgscan_direct",
		"proc-vmstat.pgscan_kswapd",
	};
	struct lkp_row rows[N(want)];

	/* reversed, then every third swapped: any input order */
	for (size_t i = 0; i < N(want); i++) {
		memset(&rows[i], 0, sizeof(rows[i]));
		rows[i].name = want[N(want) - 1 - i];
		rows[i].ncols = 2;
	}
	for (size_t i = 0; i + 3 < N(want); i += 3) {
		struct lkp_row t = rows[i];

		rows[i] = rows[i + 2];
		rows[i + 2] = t;
	}
	cr_assert_eq(lkp_rows_sort(rows, N(want), "vm-scalability"), 0);
	for (size_t i = 0; i < N(want); i++)
		cr_expect_str_eq(rows[i].name, want[i], "row %zu", i);
}

Test(lkp, row_order_perf_profile)
{
	struct {
		const char *name;
		double change;
	} in[] = {
		{"sched_debug.e", 1}, {"perf-profile.self.d", 2}, {"sched_debug.a", 1},
		{"perf-profile.calltrace.a", -5}, {"meminfo.x", 1}, {"sched_debug.c", 1},
		{"perf-profile.children.c", -1}, {"sched_debug.b", 1}, {"perf-profile.self.e", -3},
		{"sched_debug.d", 1}, {"perf-profile.calltrace.b", -10}, {"will-it-scale.per_process_ops", 1},
	};
	const char *want[] = {
		"will-it-scale.per_process_ops", "meminfo.x",
		"perf-profile.calltrace.b", "perf-profile.calltrace.a", "perf-profile.children.c",
		"perf-profile.self.e", "perf-profile.self.d",
		"sched_debug.a", "sched_debug.b", "sched_debug.c", "sched_debug.d", "sched_debug.e",
	};
	struct lkp_row rows[N(in)];

	for (size_t i = 0; i < N(in); i++) {
		memset(&rows[i], 0, sizeof(rows[i]));
		rows[i].name = in[i].name;
		rows[i].ncols = 2;
		rows[i].change[1] = in[i].change;
	}
	cr_assert_eq(lkp_rows_sort(rows, N(in), NULL), 0);
	for (size_t i = 0; i < N(in); i++)
		cr_expect_str_eq(rows[i].name, want[i], "row %zu", i);
}

Test(lkp, block_seed_003_shape)
{
	const char *keys[] = {"testcase", "tbox_group", "test", "runtime"};
	const char *vals[] = {"vm-scalability", "lkp-bdw-ex2", "lru-file-mmap-read", "300s"};
	const struct lkp_kernel kernels[2] = {
		{"a4fe1631f313f75c9d8f4b5e0e9cba1c1bd1d68e",
		 "mm: vmscan: drop unnecessary div0 avoidance rounding in get_scan_count()"},
		{"1431d4d11abb265e79cd44bed2f5ea93f1bcc57b",
		 "mm: base LRU balancing on an explicit cost model"},
	};
	const size_t runs[2] = {4, 4}, four[2] = {4, 4};
	const double tb[] = {20717269, 20717269, 20717269, 20717269},
		     ta[] = {18336098, 18336098, 18336098, 18336098};
	const double fb[] = {0.2268, 0.2388, 0.2268, 0.2388},
		     fa[] = {0.26004, 0.26004, 0.26004, 0.26004};
	const double ub[] = {4.43, 4.43, 4.43, 4.43}, ua[] = {3.80, 4.00, 3.80, 4.00};
	const double pb[] = {13.11, 13.11, 13.11, 13.11}, pa[] = {1.79, 1.79, 1.79, 1.79};
	const double db[] = {0, 0, 0, 0}, da[] = {1, 0, 1, 0};
	const double sb[] = {10, 10, 10, 10};
	const double *t_v[2] = {tb, ta}, *f_v[2] = {fb, fa}, *u_v[2] = {ub, ua},
		     *p_v[2] = {pb, pa}, *d_v[2] = {db, da}, *s_v[2] = {sb, sb};
	const struct lkp_stat stats[] = {
		{"perf-profile.calltrace.cycles-pp._raw_spin_lock_irqsave.folio_lruvec_lock_irqsave", p_v, four, 0},
		{"vmstat.cpu.us", s_v, four, 0}, /* unchanged: no row */
		{"mpstat.cpu.all.usr%", u_v, four, 0},
		{"vm-scalability.throughput", t_v, four, 0},
		{"dmesg.WARNING:at_mm/vmscan.c", d_v, four, 0},
		{"vm-scalability.free_time", f_v, four, 0},
	};
	struct lkp_block blk = {4, keys, vals, 2, kernels, runs, "vm-scalability", N(stats), stats};
	const char *want =
		"=========================================================================================\n"
		"runtime/tbox_group/test/testcase:\n"
		"  300s/lkp-bdw-ex2/lru-file-mmap-read/vm-scalability\n"
		"\n"
		"commit: \n"
		"  a4fe1631f3 (\"mm: vmscan: drop unnecessary div0 avoidance rounding in get_scan_count()\")\n"
		"  1431d4d11a (\"mm: base LRU balancing on an explicit cost model\")\n"
		"\n"
		"a4fe1631f313f75c 1431d4d11abb265e79cd44bed2f \n"
		"---------------- --------------------------- \n"
		"       fail:runs  %reproduction    fail:runs\n"
		"           |             |             |    \n"
		"           :4           50%           2:4     dmesg.WARNING:at_mm/vmscan.c\n"
		"         %stddev     %change         %stddev\n"
		"             \\          |                \\  \n"
		"      0.23 \xc2\xb1  2%     +11.7%       0.26        vm-scalability.free_time\n"
		"  20717269           -11.5%   18336098        vm-scalability.throughput\n"
		"      4.43            -0.5        3.90 \xc2\xb1  2%  mpstat.cpu.all.usr%\n"
		"     13.11           -11.3        1.79        perf-profile.calltrace.cycles-pp."
		"_raw_spin_lock_irqsave.folio_lruvec_lock_irqsave\n"
		"\n";
	char *out;
	size_t len;

	cr_assert_eq(lkp_render(&blk, &out, &len), 0);
	cr_expect_str_eq(out, want);
	cr_expect_eq(len, strlen(want));
	free(out);

	/* without subjects the commit lines show the full sha */
	const struct lkp_kernel bare[2] = {{kernels[0].sha, NULL}, {kernels[1].sha, NULL}};
	blk.kernels = bare;
	blk.naxes = 0;
	cr_assert_eq(lkp_render(&blk, &out, NULL), 0);
	cr_expect(strncmp(out,
			  "=========================================================================================\n"
			  "commit: \n"
			  "  a4fe1631f313f75c9d8f4b5e0e9cba1c1bd1d68e\n"
			  "  1431d4d11abb265e79cd44bed2f5ea93f1bcc57b\n\n", 170) == 0, "%s", out);
	free(out);

	/* fewer than 3 runs on both sides: nothing at all */
	const size_t two[2] = {2, 2};
	blk.runs = two;
	cr_assert_eq(lkp_render(&blk, &out, &len), 0);
	cr_expect_str_eq(out, "");
	cr_expect_eq(len, 0);
	free(out);
}

Test(lkp, block_two_targets_and_nothing_changed)
{
	const struct lkp_kernel kernels[3] = {{"v6.4-rc4", NULL},
					      {"f1989218504dfe1ab4bdad3b8c0422f57c7698db", NULL},
					      {"0123456789abcdef0123456789abcdef01234567", NULL}};
	const size_t runs[3] = {3, 3, 3}, three[3] = {3, 3, 3};
	const double b[] = {13.11, 13.11, 13.11}, a1[] = {1.79, 1.79, 1.79}, a2[] = {13.11, 13.11, 13.11};
	const double *v[3] = {b, a1, a2}, *same[3] = {b, a2, a2};
	const struct lkp_stat stats[1] = {{"perf-profile.self.folio_lruvec_lock_irqsave", v, three, 0}};
	const struct lkp_stat quiet[1] = {{"perf-profile.self.folio_lruvec_lock_irqsave", same, three, 0}};
	struct lkp_block blk = {0, NULL, NULL, 3, kernels, runs, "memtier", 1, stats};
	char *out;

	cr_assert_eq(lkp_render(&blk, &out, NULL), 0);
	cr_expect(strstr(out,
			 "\n        v6.4-rc4 f1989218504dfe1ab4bdad3b8c0 0123456789abcdef0123456789a \n"
			 "---------------- --------------------------- --------------------------- \n"
			 "         %stddev     %change         %stddev     %change         %stddev\n"
			 "             \\          |                \\          |                \\  \n"
			 "     13.11           -11.3        1.79            +0.0       13.11        "
			 "perf-profile.self.folio_lruvec_lock_irqsave\n\n") != NULL, "%s", out);
	free(out);
	blk.stats = quiet;
	cr_assert_eq(lkp_render(&blk, &out, NULL), 0);
	cr_expect_str_eq(out, "");
	free(out);
	blk.ncols = 1;
	cr_expect_eq(lkp_render(&blk, &out, NULL), -1);
	cr_expect_null(out);
}
