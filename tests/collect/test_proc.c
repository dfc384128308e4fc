/*
 * test_proc.c - counter snapshots and the rule that turns two into one
 * iteration: /proc/vmstat event counters as differences and gauges as means
 * (LKP's event-counter prefixes), meminfo averaged, memory.stat of the
 * cgroup (v1 and v2 paths), and /proc/lock_stat differences per class.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/lockstat.h"
#include "collectors/host/proc.h"
#include "lib/metric_role.h"
#include "tests/collect/testutil.h"

static double value(json_t *metrics, const char *name)
{
	json_t *a = json_object_get(metrics, name);
	cr_assert(json_is_array(a) && json_array_size(a) == 1, "metric %s: want one value", name);
	return json_number_value(json_array_get(a, 0));
}

static void write_tree(const char *dir, int after)
{
	char vmstat[1024], meminfo[512], memstat[512];
	char *lock;
	size_t len;

	/* counters grow; gauges move both ways */
	snprintf(vmstat, sizeof(vmstat),
		 "nr_free_pages %d\nnr_inactive_file %d\nnr_dirtied %d\nnr_written %d\n"
		 "pgscan_kswapd %d\npgsteal_direct %d\npswpin %d\nworkingset_refault_file %d\n"
		 "workingset_nodes %d\nallocstall_normal %d\nthp_fault_alloc %d\n"
		 "compact_stall %d\nnuma_hit %d\nunevictable_pgs_culled %d\n",
		 after ? 1000 : 3000, after ? 500 : 700, after ? 1250 : 1000, after ? 1100 : 1000,
		 after ? 90000 : 10000, after ? 40 : 30, after ? 7 : 2, after ? 600 : 100,
		 after ? 50 : 30, after ? 9 : 4, after ? 3 : 1, after ? 5 : 5, after ? 2000 : 1000,
		 after ? 11 : 10);
	tu_write(dir, "proc/vmstat", vmstat);
	snprintf(meminfo, sizeof(meminfo),
		 "MemTotal:       16318076 kB\nMemFree:         %d kB\nActive(file):    %d kB\n"
		 "HugePages_Total:       0\n",
		 after ? 1000000 : 2000000, after ? 300 : 100);
	tu_write(dir, "proc/meminfo", meminfo);
	tu_write(dir, "proc/self/cgroup", "0::/lab.slice/bench.scope\n");
	snprintf(memstat, sizeof(memstat),
		 "anon %d\nfile %d\npgscan %d\npgsteal %d\nworkingset_refault_file %d\n"
		 "workingset_nodes %d\nthp_fault_alloc %d\n",
		 after ? 4000 : 2000, after ? 9000 : 10000, after ? 800 : 300, after ? 700 : 200,
		 after ? 55 : 5, after ? 12 : 10, after ? 2 : 0);
	tu_write(dir, "sys/fs/cgroup/lab.slice/bench.scope/memory.stat", memstat);
	lock = read_file(after ? "tests/fixtures/collect/lock_stat/after"
			       : "tests/fixtures/collect/lock_stat/before",
			 1u << 20, &len);
	cr_assert_not_null(lock);
	tu_write(dir, "proc/lock_stat", lock);
	free(lock);
}

static void take(const char *dir, struct snapshot *s)
{
	char proc[4200], sys[4200];
	snprintf(proc, sizeof(proc), "%s/proc", dir);
	snprintf(sys, sizeof(sys), "%s/sys", dir);
	setenv("KPERF_PROC_ROOT", proc, 1);
	setenv("KPERF_SYS_ROOT", sys, 1);
	snapshot_take(s);
}

Test(proc, vmstat_meminfo_memcg_delta_and_gauge_rules)
{
	static const struct {
		const char *metric;
		double want;
	} rows[] = {
		/* gauges: mean of before and after */
		{"proc-vmstat.nr_free_pages", 2000},
		{"proc-vmstat.nr_inactive_file", 600},
		{"proc-vmstat.workingset_nodes", 40},
		/* LKP's event counters: after - before */
		{"proc-vmstat.nr_dirtied", 250},
		{"proc-vmstat.nr_written", 100},
		{"proc-vmstat.pgscan_kswapd", 80000},
		{"proc-vmstat.pgsteal_direct", 10},
		{"proc-vmstat.pswpin", 5},
		{"proc-vmstat.allocstall_normal", 5},
		{"proc-vmstat.thp_fault_alloc", 2},
		{"proc-vmstat.compact_stall", 0},
		{"proc-vmstat.numa_hit", 1000},
		{"proc-vmstat.unevictable_pgs_culled", 1},
		/* cumulative although LKP's list misses it */
		{"proc-vmstat.workingset_refault_file", 500},
		/* meminfo: gauges */
		{"meminfo.MemTotal", 16318076},
		{"meminfo.MemFree", 1500000},
		{"meminfo.Active(file)", 200},
		{"meminfo.HugePages_Total", 0},
		/* memory.stat of the cgroup (v2 path) */
		{"memcg.anon", 3000},
		{"memcg.file", 9500},
		{"memcg.pgscan", 500},
		{"memcg.pgsteal", 500},
		{"memcg.workingset_refault_file", 50},
		{"memcg.workingset_nodes", 11},
		{"memcg.thp_fault_alloc", 2},
	};
	char before_dir[4096], after_dir[4096];
	struct snapshot before, after;
	json_t *m = json_object();

	tu_tmpdir(before_dir, sizeof(before_dir));
	tu_tmpdir(after_dir, sizeof(after_dir));
	write_tree(before_dir, 0);
	write_tree(after_dir, 1);
	take(before_dir, &before);
	take(after_dir, &after);
	cr_assert_not_null(before.vmstat);
	cr_assert_not_null(after.memcg, "memory.stat of the v2 cgroup was not found");
	snapshot_delta(&before, &after, m);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		cr_expect_float_eq(value(m, rows[i].metric), rows[i].want, 1e-9, "%s",
				   rows[i].metric);
	/* lock_stat: the before fixture x3 is the after one */
	cr_expect_float_eq(value(m, "lock_stat.&lruvec->lru_lock.contentions"), 24000, 1e-9);
	snapshot_release(&before);
	snapshot_release(&after);
	json_decref(m);
}

Test(proc, event_counter_prefixes)
{
	static const struct {
		const char *key;
		int event;
	} rows[] = {
		{"pgfault", 1},	       {"pgscan_direct", 1},	   {"pswpout", 1},
		{"allocstall_movable", 1}, {"kswapd_low_wmark_hit_quickly", 1},
		{"nr_free_pages", 0},  {"nr_anon_pages", 0},	   {"nr_dirtied", 1},
		{"workingset_nodes", 0}, {"workingset_refault_anon", 1}, {"drop_pagecache", 1},
		{"nr_zspages", 0},     {"thp_split_page", 1},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		cr_expect_eq(vmstat_is_event(rows[i].key), rows[i].event, "%s", rows[i].key);
	cr_expect(memcg_is_event("total_pgmajfault"), "v1 hierarchical counters are events");
	cr_expect(!memcg_is_event("total_rss"));
	cr_expect(!memcg_is_event("anon"));
}

Test(proc, memcg_path_v1_and_v2)
{
	static const struct {
		const char *cgroup, *want;
	} rows[] = {
		{"0::/user.slice/session-1.scope\n", "/fs/cgroup/user.slice/session-1.scope/memory.stat"},
		{"12:cpu,cpuacct:/\n4:memory:/lab/job7\n0::/\n", "/fs/cgroup/memory/lab/job7/memory.stat"},
		{"4:memory:/\n", "/fs/cgroup/memory/memory.stat"},
		{"0::/\n", "/fs/cgroup/memory.stat"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char dir[4096], proc[4200], want[4300];
		char *got;

		tu_tmpdir(dir, sizeof(dir));
		tu_write(dir, "proc/self/cgroup", rows[i].cgroup);
		snprintf(proc, sizeof(proc), "%s/proc", dir);
		setenv("KPERF_PROC_ROOT", proc, 1);
		setenv("KPERF_SYS_ROOT", "/SYS", 1);
		snprintf(want, sizeof(want), "/SYS%s", rows[i].want);
		got = memcg_stat_path();
		cr_assert_not_null(got);
		cr_expect_str_eq(got, want, "%s", rows[i].cgroup);
		free(got);
	}
}

Test(proc, lock_stat_delta_keeps_lru_lock_and_top_classes)
{
	size_t lb, la;
	char *tb = read_file("tests/fixtures/collect/lock_stat/before", 1u << 20, &lb);
	char *ta = read_file("tests/fixtures/collect/lock_stat/after", 1u << 20, &la);
	json_t *before = json_object(), *after = json_object(), *m = json_object();
	char msg[128];

	cr_assert_eq(lockstat_read(tb, lb, before, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_eq(lockstat_read(ta, la, after, msg, sizeof(msg)), 0, "%s", msg);
	cr_assert_eq(lockstat_delta(before, after, m), 2, "two classes were contended");
	/* counts and totals: differences (after is 3x before) */
	cr_expect_float_eq(value(m, "lock_stat.&lruvec->lru_lock.contentions"), 24000, 1e-9);
	cr_expect_float_eq(value(m, "lock_stat.&lruvec->lru_lock.acquisitions"), 18000000, 1e-6);
	cr_expect_float_eq(value(m, "lock_stat.&lruvec->lru_lock.waittime-total"),
			   2 * 123456.78, 1e-6);
	cr_expect_float_eq(value(m, "lock_stat.&lruvec->lru_lock.contentions.release_pages"),
			   6000, 1e-9);
	/* min/max: the later reading; avg: recomputed from the differences */
	cr_expect_float_eq(value(m, "lock_stat.&lruvec->lru_lock.waittime-max"), 150.20, 1e-9);
	cr_expect_float_eq(value(m, "lock_stat.&lruvec->lru_lock.waittime-avg"),
			   2 * 123456.78 / 24000, 1e-9);
	/* class names lose their spaces */
	cr_expect_float_eq(value(m, "lock_stat.&sb->s_type->i_mutex_key#3.contentions"), 100, 1e-9);
	/* uncontended during the interval and not an lru_lock: left out */
	cr_expect_null(json_object_get(m, "lock_stat.&mm->mmap_lock-R.contentions"));
	free(tb);
	free(ta);
	json_decref(before);
	json_decref(after);
	json_decref(m);
}
