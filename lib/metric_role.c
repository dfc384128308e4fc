/*
 * metric_role.c - the KPI table of every benchmark kperf-collect parses,
 * and the rules for the rows a run carries beside them.
 */
#include <fnmatch.h>
#include <stddef.h>
#include <string.h>

#include "lib/metric_role.h"

/*
 * A benchmark's KPIs: globs over the name after "<program>.", by rank (0:
 * the headline's kind). Everything else a listed program reports is
 * informational: for a fixed-time benchmark a total is only the time it
 * ran, and a sum, a stddev or an elapsed time is no figure of merit.
 */
struct kpi_rule {
	const char *program;
	int rank;
	const char *glob;
};

static const struct kpi_rule kpi_rules[] = {
	{"sysbench", 0, "transactions_per_sec"},
	{"sysbench", 0, "tps"},
	{"sysbench", 0, "events_per_sec"},
	{"sysbench", 0, "operations_per_sec"},
	{"sysbench", 1, "mib_per_sec"},
	{"sysbench", 1, "queries_per_sec"},
	{"sysbench", 1, "reads_per_sec"},
	{"sysbench", 1, "writes_per_sec"},
	{"sysbench", 2, "read_mib_per_sec"},
	{"sysbench", 2, "write_mib_per_sec"},
	{"sysbench", 2, "fsyncs_per_sec"},
	{"sysbench", 3, "latency_avg_ms"},
	{"sysbench", 3, "latency_*percentile*"},
	{"stress-ng", 0, "*.ops_per_sec"},
	{"fio", 0, "*iops"},
	{"fio", 1, "*bw_MBps"},
	{"fio", 2, "*clat_mean_ns"},
	{"fio", 3, "*clat_*%_ns"},
	{"memtier", 0, "*totals_ops/s"},
	{"memtier", 1, "*_ops/s"},
	{"memtier", 1, "*_kb/s"},
	{"memtier", 2, "*_latency_ms"},
	{"pgbench", 0, "tps"},
	{"pgbench", 1, "latency_ms"},
	{"redis-benchmark", 0, "*.rps"},
	{"redis-benchmark", 1, "*.avg_latency_ms"},
	{"redis-benchmark", 1, "*.p[0-9]*_latency_ms"},
	{"hackbench", 0, "throughput"},
	{"readtwice", 0, "throughput"},
	{"readtwice", 1, "avg_throughput"},
	{"vm-scalability", 0, "throughput"},
	{"vm-scalability", 1, "median"},
	{"will-it-scale", 0, "*per_process_ops"},
	{"will-it-scale", 0, "*per_thread_ops"},
	{"ycsb", 0, "*throughput_ops/s"},
	{"ycsb", 1, "*averagelatency"},
	{"ycsb", 1, "*[0-9]%latency"},
};

/* Rows of a program no table lists that are never its KPIs. */
static const char *const info_globs[] = {
	"*total*", "*sum*", "*stddev*", "*elapsed*", "*_time", "*time_*", "*.time", "time",
	"*duration*", "nr_*", "*count", "*errors*", "*failed*",
};

/* LKP's etc/event-counter-prefixes for proc-vmstat, then cumulative
 * counters LKP's list misses (workingset_nodes is a gauge). */
static const char *const vmstat_events[] = {
	"allocstall", "compact_", "htlb_buddy_alloc_", "kswapd_", "nr_dirtied", "nr_promoted",
	"nr_promote_fail", "nr_promote_isolate_fail", "nr_promote_ratelimit",
	"nr_vmscan_immediate_reclaim", "nr_written", "numa_", "pageoutrun", "pg", "pswp",
	"slabs_scanned", "thp_", "unevictable_pgs_", "zone_reclaim_failed",
	"workingset_refault", "workingset_activate", "workingset_restore",
	"workingset_nodereclaim", "oom_kill", "drop_pagecache", "drop_slab", "swap_ra",
	"zswpin", "zswpout", "zswpwb", "balloon_", "ksm_swpin_copy", "cow_ksm",
	NULL,
};

static const char *const memcg_events[] = {
	"pg", "workingset_refault", "workingset_activate", "workingset_restore",
	"workingset_nodereclaim", "thp_", "zswpin", "zswpout", "zswpwb", "numa_", NULL,
};

static int has_prefix(const char *key, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (!strncmp(key, *prefixes, strlen(*prefixes)))
			return 1;
	return 0;
}

int vmstat_is_event(const char *key)
{
	return has_prefix(key, vmstat_events);
}

int memcg_is_event(const char *key)
{
	if (!strncmp(key, "total_", 6))
		key += 6;
	return has_prefix(key, memcg_events);
}

static int any_match(const char *const *globs, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (fnmatch(globs[i], s, 0) == 0)
			return 1;
	return 0;
}

/* metric's program ("sysbench" of "sysbench.events_per_sec") in out. */
static const char *program_of(const char *metric, char *out, size_t outsz)
{
	size_t n = strcspn(metric, ".");

	if (n >= outsz)
		n = outsz - 1;
	memcpy(out, metric, n);
	out[n] = '\0';
	return metric[strcspn(metric, ".")] ? metric + strcspn(metric, ".") + 1 : "";
}

static int listed(const char *program)
{
	for (size_t i = 0; i < sizeof(kpi_rules) / sizeof(kpi_rules[0]); i++)
		if (!strcmp(kpi_rules[i].program, program))
			return 1;
	return 0;
}

int metric_kpi_rank(const char *metric, const char *suite)
{
	char program[64];
	const char *key = program_of(metric, program, sizeof(program));
	int best = -1;

	if (!*key)
		return -1;
	if (listed(program)) {
		for (size_t i = 0; i < sizeof(kpi_rules) / sizeof(kpi_rules[0]); i++)
			if (!strcmp(kpi_rules[i].program, program) &&
			    fnmatch(kpi_rules[i].glob, key, 0) == 0 &&
			    (best < 0 || kpi_rules[i].rank < best))
				best = kpi_rules[i].rank;
		return best;
	}
	/* a benchmark of its own (kv, json, lkp-stats imports): its rows are
	 * its KPIs, but for those no benchmark counts as a figure of merit */
	if (suite && *suite && !strcmp(program, suite) &&
	    !any_match(info_globs, sizeof(info_globs) / sizeof(info_globs[0]), key))
		return 0;
	return -1;
}

enum metric_role metric_role(const char *metric, const char *suite)
{
	return metric_role_rank(metric, suite, NULL);
}

enum metric_role metric_role_rank(const char *metric, const char *suite, int *rank)
{
	char program[64];
	const char *key = program_of(metric, program, sizeof(program));
	int r = metric_kpi_rank(metric, suite);

	if (rank)
		*rank = r;
	if (r >= 0)
		return ROLE_KPI;
	/* the counters collected around each iteration: events next to the
	 * KPI (kperf-collect posts their deltas), gauges and sizes monitors */
	if (!strcmp(program, "proc-vmstat"))
		return vmstat_is_event(key) ? ROLE_EVENT : ROLE_MONITOR;
	if (!strcmp(program, "memcg"))
		return memcg_is_event(key) ? ROLE_EVENT : ROLE_MONITOR;
	if (!strcmp(program, "lock_stat") || !strcmp(program, "perf-lock") ||
	    !strcmp(program, "perf-stat"))
		return ROLE_EVENT;
	if (!strcmp(program, "meminfo") || !strcmp(program, "perf-profile") ||
	    !strcmp(program, "vmstat") || !strcmp(program, "iostat") ||
	    !strcmp(program, "swap") || !strcmp(program, "mglru") || !strcmp(program, "numa"))
		return ROLE_MONITOR;
	return ROLE_INFO;
}

static const char *const role_names[ROLE_COUNT] = {"kpi", "event", "info", "monitor"};

const char *metric_role_name(enum metric_role r)
{
	return r < ROLE_COUNT ? role_names[r] : "info";
}

int metric_role_parse(const char *s)
{
	for (int i = 0; i < ROLE_COUNT; i++)
		if (s && !strcmp(s, role_names[i]))
			return i;
	return -1;
}
