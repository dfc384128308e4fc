/*
 * metric_role.h - what a metric is to the person reading a comparison: a
 * benchmark's KPI, an event counter shown next to it, an informational row
 * of the benchmark (totals, sums, elapsed times, stddevs, rusage) or a
 * machine monitor (page-cache gauges, memcg sizes, perf-profile rows).
 *
 * One table for every parser kperf-collect has, in the way LKP's stats
 * scripts and mmtests' compare configs name a benchmark's figures: kperfd
 * decides, mails and orders by it; kperf-collect's progress line shows the
 * headline. Shared by kperfd and kperf-collect.
 */
#ifndef KPERF_METRIC_ROLE_H
#define KPERF_METRIC_ROLE_H

enum metric_role {
	ROLE_KPI,     /* the benchmark's own figure: decided, confirmed, mailed */
	ROLE_EVENT,   /* event counters (pgscan_*, lock_stat, perf-lock): next to the KPI */
	ROLE_INFO,    /* totals, sums, elapsed times, stddevs, rusage: shown, never a KPI */
	ROLE_MONITOR, /* machine gauges and sizes, perf-profile rows: folded, not decided alone */
	ROLE_COUNT
};

/* The role of metric in a run of suite (NULL or "" when unknown). */
enum metric_role metric_role(const char *metric, const char *suite);

/*
 * The rank of a KPI: 0 for the suite's headline kind (throughput, events
 * per second, IOPS), higher for the KPIs after it (latency percentiles);
 * -1 when metric is no KPI. Of a run's metrics, the headline is the one
 * with the lowest rank, the first in byte order among equals.
 */
int metric_kpi_rank(const char *metric, const char *suite);

/* 1 when a /proc/vmstat key counts events (LKP's etc/event-counter-prefixes
 * and the counters it misses), 0 for a gauge. */
int vmstat_is_event(const char *key);

/* 1 when a memory.stat key counts events (cgroup v1 "total_" keys too). */
int memcg_is_event(const char *key);

/* metric_role and, into *rank when not NULL, metric_kpi_rank: one lookup. */
enum metric_role metric_role_rank(const char *metric, const char *suite, int *rank);

/* "kpi", "event", "info", "monitor" */
const char *metric_role_name(enum metric_role r);

/* The role named s, or -1. */
int metric_role_parse(const char *s);

#endif
