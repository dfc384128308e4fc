/*
 * test_metric_role.c - the role of every row a real run carries: the names
 * are those kperf-collect's parsers print for the fixtures of
 * tests/fixtures/collect/ and the /proc rows around each iteration.
 */
#include <criterion/criterion.h>

#include "lib/metric_role.h"

struct want {
	const char *metric, *suite;
	enum metric_role role;
	int rank;
};

static const struct want wants[] = {
	/* the rows the reviewer's first hour called KPIs: none is one */
	{"sysbench.total_time", "sysbench", ROLE_INFO, -1},
	{"sysbench.latency_sum_ms", "sysbench", ROLE_INFO, -1},
	{"sysbench.execution_time_avg", "sysbench", ROLE_INFO, -1},
	{"sysbench.events_stddev", "sysbench", ROLE_INFO, -1},
	{"sysbench.total_operations", "sysbench", ROLE_INFO, -1},
	{"sysbench.total_events", "sysbench", ROLE_INFO, -1},
	{"sysbench.latency_max_ms", "sysbench", ROLE_INFO, -1},
	{"fio.rr.read_clat_stddev", "fio", ROLE_INFO, -1},
	{"stress-ng.vm.usr_time", "stress-ng", ROLE_INFO, -1},
	{"stress-ng.vm.ops", "stress-ng", ROLE_INFO, -1},
	{"stress-ng.vm.ops_per_sec_usr_sys", "stress-ng", ROLE_INFO, -1},
	{"time.user_time", "sysbench", ROLE_INFO, -1},
	{"time.elapsed_time", "fio", ROLE_INFO, -1},
	/* each parser's KPIs, the headline's kind at rank 0 */
	{"sysbench.events_per_sec", "sysbench", ROLE_KPI, 0},
	{"sysbench.operations_per_sec", "sysbench", ROLE_KPI, 0},
	{"sysbench.transactions_per_sec", "sysbench", ROLE_KPI, 0},
	{"sysbench.tps", "sysbench", ROLE_KPI, 0},
	{"sysbench.mib_per_sec", "sysbench", ROLE_KPI, 1},
	{"sysbench.latency_95th_percentile_ms", "sysbench", ROLE_KPI, 3},
	{"sysbench.latency_avg_ms", "sysbench", ROLE_KPI, 3},
	{"stress-ng.vm.ops_per_sec", "stress-ng", ROLE_KPI, 0},
	{"fio.randread.read_iops", "fio", ROLE_KPI, 0},
	{"fio.read_iops", "fio", ROLE_KPI, 0},
	{"fio.randread.read_bw_MBps", "fio", ROLE_KPI, 1},
	{"fio.randread.read_clat_mean_ns", "fio", ROLE_KPI, 2},
	{"fio.randread.read_clat_99.9%_ns", "fio", ROLE_KPI, 3},
	{"fio.randread.read_lat_mean_ns", "fio", ROLE_INFO, -1},
	{"memtier.avg_totals_ops/s", "memtier", ROLE_KPI, 0},
	{"memtier.total_gets_p99_latency_ms", "memtier", ROLE_KPI, 2},
	{"memtier.avg_gets_hits/s", "memtier", ROLE_INFO, -1},
	{"pgbench.tps", "pgbench", ROLE_KPI, 0},
	{"pgbench.latency_ms", "pgbench", ROLE_KPI, 1},
	{"pgbench.initial_connection_time_ms", "pgbench", ROLE_INFO, -1},
	{"redis-benchmark.GET.rps", "redis-benchmark", ROLE_KPI, 0},
	{"redis-benchmark.GET.p99_latency_ms", "redis-benchmark", ROLE_KPI, 1},
	{"redis-benchmark.GET.max_latency_ms", "redis-benchmark", ROLE_INFO, -1},
	{"hackbench.throughput", "hackbench", ROLE_KPI, 0},
	{"hackbench.time", "hackbench", ROLE_INFO, -1},
	{"readtwice.throughput", "readtwice", ROLE_KPI, 0},
	{"readtwice.nr_processes", "readtwice", ROLE_INFO, -1},
	{"vm-scalability.throughput", "vm-scalability", ROLE_KPI, 0},
	{"vm-scalability.stddev", "vm-scalability", ROLE_INFO, -1},
	{"will-it-scale.16.per_process_ops", "will-it-scale", ROLE_KPI, 0},
	{"ycsb.total_throughput_ops/s", "ycsb", ROLE_KPI, 0},
	{"ycsb.read.95%latency", "ycsb", ROLE_KPI, 1},
	/* a listed benchmark's rows are its own also in another suite's run */
	{"vm-scalability.throughput", NULL, ROLE_KPI, 0},
	/* a benchmark of its own (kv, json): its rows but for totals and times */
	{"kbench.ops", "kbench", ROLE_KPI, 0},
	{"kbench.total_time", "kbench", ROLE_INFO, -1},
	{"kbench.ops", "other", ROLE_INFO, -1},
	/* event counters stay next to the KPI */
	{"proc-vmstat.pgscan_kswapd", "fio", ROLE_EVENT, -1},
	{"proc-vmstat.workingset_refault_file", "fio", ROLE_EVENT, -1},
	{"lock_stat.&lruvec->lru_lock.contentions", "readtwice", ROLE_EVENT, -1},
	{"perf-lock._raw_spin_lock_irq.contended", "readtwice", ROLE_EVENT, -1},
	{"memcg.pgscan", "fio", ROLE_EVENT, -1},
	{"memcg.workingset_refault_anon", "fio", ROLE_EVENT, -1},
	/* machine gauges and sizes are monitors */
	{"meminfo.Cached", "fio", ROLE_MONITOR, -1},
	{"proc-vmstat.nr_inactive_file", "fio", ROLE_MONITOR, -1},
	{"proc-vmstat.workingset_nodes", "fio", ROLE_MONITOR, -1},
	{"proc-vmstat.numa_hit", "fio", ROLE_EVENT, -1},
	{"proc-vmstat.nr_dirtied", "fio", ROLE_EVENT, -1},
	{"memcg.active_file", "fio", ROLE_MONITOR, -1},
	{"memcg.cache", "fio", ROLE_MONITOR, -1},
	{"perf-profile.calltrace.cycles-pp._raw_spin_lock_irqsave.folio_lruvec_lock_irqsave",
	 "readtwice", ROLE_MONITOR, -1},
	{"vmstat.cpu.us", "fio", ROLE_MONITOR, -1},
};

Test(metric_role, every_parsers_rows)
{
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		const struct want *w = &wants[i];
		cr_expect_eq(metric_role(w->metric, w->suite), w->role, "%s (%s): %s, want %s",
			     w->metric, w->suite ? w->suite : "-",
			     metric_role_name(metric_role(w->metric, w->suite)),
			     metric_role_name(w->role));
		cr_expect_eq(metric_kpi_rank(w->metric, w->suite), w->rank, "%s rank %d, want %d",
			     w->metric, metric_kpi_rank(w->metric, w->suite), w->rank);
		{
			int rank = -2;
			cr_expect_eq(metric_role_rank(w->metric, w->suite, &rank), w->role, "%s", w->metric);
			cr_expect_eq(rank, w->rank, "%s: metric_role_rank's rank", w->metric);
		}
	}
}

Test(metric_role, names_round_trip)
{
	for (int r = 0; r < ROLE_COUNT; r++)
		cr_assert_eq(metric_role_parse(metric_role_name((enum metric_role)r)), r);
	cr_assert_eq(metric_role_parse("kpis"), -1);
	cr_assert_eq(metric_role_parse(NULL), -1);
}
