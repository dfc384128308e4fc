/*
 * test_parsers_tools.c - the parsers of the benchmarks labs run, against
 * outputs of the real tools made on a 2-CPU Debian 12 machine
 * (tests/fixtures/collect/<tool>/, each beside the .cmd that made it): the
 * headline figures equal what the tool printed, every metric has a
 * direction, the two forms of one output (table and YAML, table and JSON)
 * agree, cut or garbled outputs fail naming file and line with exit 65 and
 * nothing sent, and kperfd takes every run the fixtures make.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"
#include "tests/integration/harness.h"
#include "tests/collect/testutil.h"

#define FIX "tests/fixtures/collect/"

/* Every fixture, with the number of metrics it gives (a guard against losing some). */
static const struct {
	const char *format, *file;
	size_t nmetrics;
} fixtures[] = {
	{"sysbench", "sysbench/cpu", 12},
	{"sysbench", "sysbench/memory", 15},
	{"sysbench", "sysbench/fileio", 16},
	{"sysbench", "sysbench/threads", 11},
	{"sysbench", "sysbench/mutex", 11},
	{"sysbench", "sysbench/oltp-pgsql", 23},
	{"stress-ng", "stress-ng/cpu-vm.out", 14},
	{"stress-ng", "stress-ng/cpu-vm.yml", 14},
	{"stress-ng", "stress-ng/memrate-switch.out", 38},
	{"stress-ng", "stress-ng/memrate-switch.yml", 38},
	{"fio", "fio/three-jobs.json", 45},
	{"redis-benchmark", "redis-benchmark/csv", 49},
	{"pgbench", "pgbench/tpcb", 5},
	{"pgbench", "pgbench/select-only", 6},
	{"hackbench", "hackbench/process", 2},
	{"hackbench", "hackbench/threads-pipe", 2},
	{"memtier", "memtier/run1.out", 65},
	{"memtier", "memtier/run1.json", 63},
	{"memtier", "memtier/runs2.out", 73},
	{"memtier", "memtier/runs2.json", 65},
};
#define NFIXTURES (sizeof(fixtures) / sizeof(fixtures[0]))

static char *slurp(const char *rel, size_t *len)
{
	char path[512];
	char *text;

	snprintf(path, sizeof(path), FIX "%s", rel);
	text = read_file(path, 64u << 20, len);
	cr_assert_not_null(text, "cannot read %s (run the tests from the repository root)", path);
	return text;
}

/* Parse fixture file with format into pc (initialised here); asserts it worked. */
static void parse_fixture(struct parse_ctx *pc, const char *format, const char *file)
{
	const struct parser *p = parser_find(format);
	size_t len;
	char *text = slurp(file, &len);

	cr_assert_not_null(p, "no format %s", format);
	parse_ctx_init(pc, file);
	cr_assert_eq(parse_run(p, pc, text, len), 0, "%s: %s", file, pc->err);
	cr_assert_eq(json_array_size(pc->runs), 1);
	free(text);
}

/* The figures each tool printed, copied from the fixture files. */
Test(tools, headline_figures_equal_what_the_tool_printed)
{
	static const struct {
		const char *format, *file, *metric;
		size_t i;
		double value;
	} rows[] = {
		/* sysbench cpu: "events per second:  1853.84" */
		{"sysbench", "sysbench/cpu", "sysbench.events_per_sec", 0, 1853.84},
		{"sysbench", "sysbench/cpu", "sysbench.total_time", 0, 3.0030},
		{"sysbench", "sysbench/cpu", "sysbench.total_events", 0, 5568},
		{"sysbench", "sysbench/cpu", "sysbench.latency_95th_percentile_ms", 0, 4.18},
		/* memory: "Total operations: 1048576 (3745237.89 per second)",
		 * "1024.00 MiB transferred (3657.46 MiB/sec)" */
		{"sysbench", "sysbench/memory", "sysbench.operations_per_sec", 0, 3745237.89},
		{"sysbench", "sysbench/memory", "sysbench.total_operations", 0, 1048576},
		{"sysbench", "sysbench/memory", "sysbench.mib_per_sec", 0, 3657.46},
		{"sysbench", "sysbench/memory", "sysbench.transferred_mib", 0, 1024.00},
		{"sysbench", "sysbench/memory", "sysbench.total_time", 0, 0.2793},
		/* fileio: reads/s, writes/s, fsyncs/s, "read, MiB/s", "written, MiB/s" */
		{"sysbench", "sysbench/fileio", "sysbench.reads_per_sec", 0, 29309.43},
		{"sysbench", "sysbench/fileio", "sysbench.writes_per_sec", 0, 19539.51},
		{"sysbench", "sysbench/fileio", "sysbench.fsyncs_per_sec", 0, 1956.52},
		{"sysbench", "sysbench/fileio", "sysbench.read_mib_per_sec", 0, 457.96},
		{"sysbench", "sysbench/fileio", "sysbench.write_mib_per_sec", 0, 305.30},
		{"sysbench", "sysbench/fileio", "sysbench.latency_max_ms", 0, 80.48},
		/* threads and mutex: time, events, latency, fairness */
		{"sysbench", "sysbench/threads", "sysbench.total_time", 0, 3.0175},
		{"sysbench", "sysbench/threads", "sysbench.total_events", 0, 6009},
		{"sysbench", "sysbench/threads", "sysbench.latency_avg_ms", 0, 2.01},
		{"sysbench", "sysbench/threads", "sysbench.events_stddev", 0, 101.34},
		{"sysbench", "sysbench/mutex", "sysbench.total_time", 0, 0.2293},
		{"sysbench", "sysbench/mutex", "sysbench.latency_avg_ms", 0, 189.11},
		{"sysbench", "sysbench/mutex", "sysbench.latency_max_ms", 0, 229.22},
		{"sysbench", "sysbench/mutex", "sysbench.execution_time_avg", 0, 0.1891},
		/* OLTP on PostgreSQL */
		{"sysbench", "sysbench/oltp-pgsql", "sysbench.transactions_per_sec", 0, 426.01},
		{"sysbench", "sysbench/oltp-pgsql", "sysbench.queries_per_sec", 0, 8531.03},
		{"sysbench", "sysbench/oltp-pgsql", "sysbench.transactions", 0, 2134},
		{"sysbench", "sysbench/oltp-pgsql", "sysbench.read_queries", 0, 29918},
		{"sysbench", "sysbench/oltp-pgsql", "sysbench.ignored_errors", 0, 3},
		{"sysbench", "sysbench/oltp-pgsql", "sysbench.latency_95th_percentile_ms", 0, 11.04},
		/* stress-ng: its metrics table ... */
		{"stress-ng", "stress-ng/cpu-vm.out", "stress-ng.cpu.ops", 0, 3290},
		{"stress-ng", "stress-ng/cpu-vm.out", "stress-ng.cpu.ops_per_sec", 0, 1096.07},
		{"stress-ng", "stress-ng/cpu-vm.out", "stress-ng.cpu.ops_per_sec_usr_sys", 0, 1770.25},
		{"stress-ng", "stress-ng/cpu-vm.out", "stress-ng.cpu.real_time", 0, 3.00},
		{"stress-ng", "stress-ng/cpu-vm.out", "stress-ng.cpu.usr_time", 0, 1.76},
		{"stress-ng", "stress-ng/cpu-vm.out", "stress-ng.cpu.sys_time", 0, 0.10},
		{"stress-ng", "stress-ng/cpu-vm.out", "stress-ng.vm.ops_per_sec", 0, 12617.23},
		{"stress-ng", "stress-ng/cpu-vm.out", "stress-ng.vm.max_rss_kb", 0, 67548},
		{"stress-ng", "stress-ng/memrate-switch.out",
		 "stress-ng.memrate.write64stoq_mb_per_sec", 0, 71247.44},
		{"stress-ng", "stress-ng/memrate-switch.out", "stress-ng.memrate.read8_mb_per_sec", 0,
		 5079.52},
		{"stress-ng", "stress-ng/memrate-switch.out",
		 "stress-ng.switch.nanosecs_per_context_switch_pipe_method", 0, 4639.23},
		{"stress-ng", "stress-ng/memrate-switch.out", "stress-ng.switch.ops_per_sec", 0,
		 215464.33},
		/* ... and its --yaml file, to more digits */
		{"stress-ng", "stress-ng/cpu-vm.yml", "stress-ng.cpu.ops_per_sec", 0, 1096.071023},
		{"stress-ng", "stress-ng/cpu-vm.yml", "stress-ng.cpu.ops_per_sec_usr_sys", 0,
		 1770.253394},
		{"stress-ng", "stress-ng/cpu-vm.yml", "stress-ng.cpu.real_time", 0, 3.001630},
		{"stress-ng", "stress-ng/cpu-vm.yml", "stress-ng.vm.ops", 0, 37888},
		{"stress-ng", "stress-ng/cpu-vm.yml", "stress-ng.vm.sys_time", 0, 0.465073},
		{"stress-ng", "stress-ng/memrate-switch.yml", "stress-ng.memrate.write64stoq_mb_per_sec",
		 0, 71247.436507},
		{"stress-ng", "stress-ng/memrate-switch.yml",
		 "stress-ng.switch.nanosecs_per_context_switch_pipe_method", 0, 4639.234823},
		{"stress-ng", "stress-ng/memrate-switch.yml", "stress-ng.switch.ops", 0, 431016},
		/* fio: "bw" (KiB/s) / 1024, "iops", clat_ns mean and percentiles */
		{"fio", "fio/three-jobs.json", "fio.seqwrite.write_bw_MBps", 0, 819200 / 1024.0},
		{"fio", "fio/three-jobs.json", "fio.seqwrite.write_iops", 0, 12800},
		{"fio", "fio/three-jobs.json", "fio.seqwrite.write_clat_mean_ns", 0, 47009.892578},
		{"fio", "fio/three-jobs.json", "fio.seqwrite.write_clat_99%_ns", 0, 432128},
		{"fio", "fio/three-jobs.json", "fio.randread.read_bw_MBps", 0, 41183 / 1024.0},
		{"fio", "fio/three-jobs.json", "fio.randread.read_iops", 0, 10295.852074},
		{"fio", "fio/three-jobs.json", "fio.randread.read_clat_99.9%_ns", 0, 2899968},
		{"fio", "fio/three-jobs.json", "fio.randrw.read_clat_50%_ns", 0, 74240},
		{"fio", "fio/three-jobs.json", "fio.randrw.write_iops", 0, 4284.857571},
		{"fio", "fio/three-jobs.json", "fio.randrw.write_clat_99.9%_ns", 0, 132096},
		{"fio", "fio/three-jobs.json", "fio.read_iops", 0, 10295.852074 + 9873.563218},
		{"fio", "fio/three-jobs.json", "fio.write_bw_MBps", 0, (819200 + 17139) / 1024.0},
		{"fio", "fio/three-jobs.json", "fio.workload", 0, 512 + 20602 + 19757 + 8574},
		/* redis-benchmark --csv */
		{"redis-benchmark", "redis-benchmark/csv", "redis-benchmark.SET.rps", 0, 43196.54},
		{"redis-benchmark", "redis-benchmark/csv", "redis-benchmark.GET.rps", 0, 54644.81},
		{"redis-benchmark", "redis-benchmark/csv", "redis-benchmark.GET.p50_latency_ms", 0,
		 0.087},
		{"redis-benchmark", "redis-benchmark/csv",
		 "redis-benchmark.LRANGE_100_first_100_elements.rps", 0, 21299.25},
		{"redis-benchmark", "redis-benchmark/csv", "redis-benchmark.MSET_10_keys.p99_latency_ms",
		 0, 3.527},
		{"redis-benchmark", "redis-benchmark/csv",
		 "redis-benchmark.LPUSH_needed_to_benchmark_LRANGE.max_latency_ms", 0, 8.639},
		/* pgbench */
		{"pgbench", "pgbench/tpcb", "pgbench.tps", 0, 1287.009337},
		{"pgbench", "pgbench/tpcb", "pgbench.latency_ms", 0, 1.554},
		{"pgbench", "pgbench/tpcb", "pgbench.transactions", 0, 5144},
		{"pgbench", "pgbench/tpcb", "pgbench.initial_connection_time_ms", 0, 5.995},
		{"pgbench", "pgbench/tpcb", "pgbench.failed_transactions", 0, 0},
		{"pgbench", "pgbench/select-only", "pgbench.tps", 0, 10136.064520},
		{"pgbench", "pgbench/select-only", "pgbench.latency_ms", 0, 0.191},
		{"pgbench", "pgbench/select-only", "pgbench.latency_stddev_ms", 0, 0.550},
		{"pgbench", "pgbench/select-only", "pgbench.transactions", 0, 40493},
		/* hackbench: three runs in one output; throughput = (160*200*100 >> 10) / time */
		{"hackbench", "hackbench/process", "hackbench.time", 0, 1.458},
		{"hackbench", "hackbench/process", "hackbench.time", 1, 0.843},
		{"hackbench", "hackbench/process", "hackbench.time", 2, 0.686},
		{"hackbench", "hackbench/process", "hackbench.throughput", 0, 3125 / 1.458},
		{"hackbench", "hackbench/process", "hackbench.throughput", 2, 3125 / 0.686},
		{"hackbench", "hackbench/threads-pipe", "hackbench.time", 0, 0.048},
		{"hackbench", "hackbench/threads-pipe", "hackbench.throughput", 0, 4000 / 0.048},
		/* memtier: the ALL STATS table ... */
		{"memtier", "memtier/run1.out", "memtier.avg_totals_ops/s", 0, 39121.66},
		{"memtier", "memtier/run1.out", "memtier.avg_gets_hits/s", 0, 3762.97},
		{"memtier", "memtier/run1.out", "memtier.avg_sets_p99_latency_ms", 0, 2.799},
		{"memtier", "memtier/run1.out", "memtier.avg_totals_avg_latency_ms", 0, 0.25549},
		{"memtier", "memtier/run1.out", "memtier.total_gets_kb/s", 0, 1252.31},
		/* ... its JSON file ... */
		{"memtier", "memtier/run1.json", "memtier.avg_totals_ops/s", 0, 39121.66},
		{"memtier", "memtier/run1.json", "memtier.avg_sets_avg_latency_ms", 0, 0.254},
		{"memtier", "memtier/run1.json", "memtier.avg_gets_p99.9_latency_ms", 0, 13.055},
		{"memtier", "memtier/run1.json", "memtier.avg_totals_p99_latency_ms", 0, 2.719},
		/* ... and two runs: the AGGREGATED AVERAGE table, not BEST or WORST (28278.05) */
		{"memtier", "memtier/runs2.out", "memtier.avg_totals_ops/s", 0, 35427.98},
		{"memtier", "memtier/runs2.out", "memtier.total_sets_ops/s", 0, 7087.75},
		{"memtier", "memtier/runs2.out", "memtier.avg_gets_p99.9_latency_ms", 0, 21.503},
		/* LKP's rule on the distribution: the first bucket above 99% ("SET 2.591 99.062") */
		{"memtier", "memtier/runs2.out", "memtier.set_latency_99%_ms", 0, 2.59},
		{"memtier", "memtier/runs2.out", "memtier.get_latency_99.9%_ms", 0, 21.75},
		{"memtier", "memtier/runs2.json", "memtier.avg_totals_ops/s", 0, 35427.98},
		{"memtier", "memtier/runs2.json", "memtier.set_latency_99%_ms", 0, 2.59},
		{"memtier", "memtier/runs2.json", "memtier.get_latency_99.9%_ms", 0, 21.75},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct parse_ctx pc;
		json_t *v;

		parse_fixture(&pc, rows[i].format, rows[i].file);
		v = json_array_get(json_object_get(parse_metrics(&pc), rows[i].metric), rows[i].i);
		cr_assert_not_null(v, "%s: no %s[%zu]", rows[i].file, rows[i].metric, rows[i].i);
		cr_assert(fabs(json_number_value(v) - rows[i].value) <=
				  1e-12 * fabs(rows[i].value) + 1e-12,
			  "%s: %s[%zu] = %.17g, the tool printed %.17g", rows[i].file,
			  rows[i].metric, rows[i].i, json_number_value(v), rows[i].value);
		parse_ctx_release(&pc);
	}
}

Test(tools, every_metric_has_a_direction_and_none_is_lost)
{
	for (size_t i = 0; i < NFIXTURES; i++) {
		struct parse_ctx pc;
		const char *key, *d;
		json_t *v;

		parse_fixture(&pc, fixtures[i].format, fixtures[i].file);
		cr_expect_eq(json_object_size(parse_metrics(&pc)), fixtures[i].nmetrics,
			     "%s: %zu metrics, expected %zu", fixtures[i].file,
			     json_object_size(parse_metrics(&pc)), fixtures[i].nmetrics);
		json_object_foreach(parse_metrics(&pc), key, v) {
			d = json_string_value(json_object_get(pc.directions, key));
			cr_expect(d && (!strcmp(d, "higher") || !strcmp(d, "lower")),
				  "%s: %s has no direction", fixtures[i].file, key);
		}
		parse_ctx_release(&pc);
	}
	{
		/* spot checks: throughput up, latency and time down */
		struct parse_ctx pc;
		parse_fixture(&pc, "fio", "fio/three-jobs.json");
		cr_expect_str_eq(json_string_value(json_object_get(pc.directions,
								   "fio.randread.read_iops")),
				 "higher");
		cr_expect_str_eq(json_string_value(json_object_get(
					 pc.directions, "fio.randread.read_clat_99%_ns")),
				 "lower");
		cr_expect_str_eq(json_string_value(json_object_get(pc.units,
								   "fio.randread.read_bw_MBps")),
				 "MiB/s");
		parse_ctx_release(&pc);
		parse_fixture(&pc, "hackbench", "hackbench/process");
		cr_expect_str_eq(json_string_value(json_object_get(pc.directions, "hackbench.time")),
				 "lower");
		cr_expect_str_eq(json_string_value(json_object_get(pc.units, "hackbench.time")), "s");
		parse_ctx_release(&pc);
		parse_fixture(&pc, "sysbench", "sysbench/oltp-pgsql");
		cr_expect_str_eq(json_string_value(json_object_get(pc.directions,
								   "sysbench.ignored_errors_per_sec")),
				 "lower", "errors per second are no throughput");
		parse_ctx_release(&pc);
	}
}

/* stress-ng's table and its YAML file name the same metrics; memtier's JSON and
 * table agree where both carry a figure. */
Test(tools, both_forms_of_one_output_agree)
{
	static const char *const pairs[][3] = {
		{"stress-ng", "stress-ng/cpu-vm.out", "stress-ng/cpu-vm.yml"},
		{"stress-ng", "stress-ng/memrate-switch.out", "stress-ng/memrate-switch.yml"},
		{"memtier", "memtier/runs2.out", "memtier/runs2.json"},
		{"memtier", "memtier/run1.out", "memtier/run1.json"},
	};
	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		struct parse_ctx a, b;
		const char *key;
		json_t *v;
		int memtier = !strcmp(pairs[i][0], "memtier");

		parse_fixture(&a, pairs[i][0], pairs[i][1]);
		parse_fixture(&b, pairs[i][0], pairs[i][2]);
		json_object_foreach(parse_metrics(&b), key, v) {
			json_t *w = json_object_get(parse_metrics(&a), key);
			cr_expect_not_null(w, "%s has %s, %s does not", pairs[i][2], key,
					   pairs[i][1]);
			/* the table rounds to 2 decimals; memtier's JSON averages latency
			 * its own way, so only its rates and distributions must be equal */
			if (!w || (memtier && !strstr(key, "/s") && !strstr(key, "latency_9")))
				continue;
			cr_expect(fabs(json_number_value(json_array_get(v, 0)) -
				       json_number_value(json_array_get(w, 0))) <=
					  (memtier ? 1e-9 : 0.005 + 1e-6 * json_number_value(
										json_array_get(v, 0))),
				  "%s: %s %.17g in one, %.17g in the other", pairs[i][0], key,
				  json_number_value(json_array_get(v, 0)),
				  json_number_value(json_array_get(w, 0)));
		}
		if (!memtier)
			cr_expect_eq(json_object_size(parse_metrics(&a)),
				     json_object_size(parse_metrics(&b)));
		parse_ctx_release(&a);
		parse_ctx_release(&b);
	}
}

/*
 * Each fixture cut before a line its output ends with: (format, file, where to
 * cut). The message names the file and the last line read, and the parser
 * leaves nothing behind.
 */
static const struct {
	const char *format, *file, *cut_before;
} cuts[] = {
	{"sysbench", "sysbench/cpu", "Threads fairness"},
	{"sysbench", "sysbench/memory", "    execution time"},
	{"sysbench", "sysbench/fileio", "General statistics"},
	{"sysbench", "sysbench/threads", "Latency (ms)"},
	{"sysbench", "sysbench/mutex", "         sum:"},
	{"sysbench", "sysbench/oltp-pgsql", "General statistics"},
	{"stress-ng", "stress-ng/cpu-vm.out", "stress-ng: info:  [1185] successful"},
	{"stress-ng", "stress-ng/cpu-vm.yml", "..."},
	{"stress-ng", "stress-ng/memrate-switch.out", "stress-ng: info:  [1801] successful"},
	{"stress-ng", "stress-ng/memrate-switch.yml", "    - stressor: switch"},
	{"fio", "fio/three-jobs.json", "\"disk_util\""},
	{"redis-benchmark", "redis-benchmark/csv", "\"0.318\""},
	{"pgbench", "pgbench/tpcb", "tps = "},
	{"pgbench", "pgbench/select-only", "initial connection"},
	{"hackbench", "hackbench/process", "Time: 0.686"},
	{"hackbench", "hackbench/threads-pipe", "Time:"},
	{"memtier", "memtier/run1.out", "Totals"},
	{"memtier", "memtier/run1.json", "\"Gets\""},
	{"memtier", "memtier/runs2.out", "Totals      35427.98"},
	{"memtier", "memtier/runs2.json", "\"WORST RUN RESULTS\""},
};
#define NCUTS (sizeof(cuts) / sizeof(cuts[0]))

/* The fixture cut (malloc'd), its length and its number of lines. */
static char *cut_text(size_t i, size_t *len, size_t *nlines)
{
	char *text = slurp(cuts[i].file, len), *at = strstr(text, cuts[i].cut_before);

	cr_assert_not_null(at, "%s: no \"%s\"", cuts[i].file, cuts[i].cut_before);
	*len = (size_t)(at - text);
	*at = '\0';
	*nlines = 0;
	for (size_t k = 0; k < *len; k++)
		*nlines += text[k] == '\n';
	if (*len && text[*len - 1] != '\n')
		(*nlines)++;
	return text;
}

Test(tools, truncated_outputs_name_the_file_and_last_line)
{
	for (size_t i = 0; i < NCUTS; i++) {
		struct parse_ctx pc;
		char where[300];
		size_t len, nlines;
		char *text = cut_text(i, &len, &nlines);

		parse_ctx_init(&pc, cuts[i].file);
		cr_assert_eq(parse_run(parser_find(cuts[i].format), &pc, text, len), -1,
			     "%s cut before \"%s\" was accepted", cuts[i].file, cuts[i].cut_before);
		snprintf(where, sizeof(where), "%s:%zu: ", cuts[i].file, nlines);
		cr_expect(!strncmp(pc.err, where, strlen(where)), "\"%s\" does not start with %s",
			  pc.err, where);
		cr_expect_eq(json_object_size(parse_metrics(&pc)), 0,
			     "%s: a failed parse leaves metrics behind", cuts[i].file);
		cr_expect_eq(json_object_size(pc.directions), 0);
		parse_ctx_release(&pc);
		free(text);
	}
}

/* Malformed outputs: (format, text, "file:line:" the message starts with, words in it). */
Test(tools, garbage_names_the_file_line_and_fault)
{
	static const struct {
		const char *format, *text, *where, *says;
	} rows[] = {
		{"sysbench", "CPU speed:\n    events per second:  fast\n", "in:2:", "not a number"},
		{"sysbench", "Threads fairness:\n    events (avg/stddev):  12\n", "in:2:",
		 "avg/stddev"},
		{"sysbench", "Total operations: many (1 per second)\n", "in:1:", "Total operations"},
		{"sysbench", "General statistics:\n    total time:  3.0s\n", "in:2:", "truncated"},
		{"stress-ng", "---\nmetrics:\n    - stressor: cpu\n      bogo-ops: many\n...\n", "in:4:",
		 "cpu: bogo-ops: \"many\" is not a number"},
		{"stress-ng", "---\nmetrics:\n      bogo-ops: 12\n...\n", "in:3:", "before the first"},
		{"stress-ng", "---\nmetrics:\n    - stressor: a b\n...\n", "in:3:", "stressor: NAME"},
		{"stress-ng", "---\nmetrics:\n    - stressor: cpu\n      nothing here\n", "in:4:",
		 "key: value"},
		{"stress-ng",
		 "stress-ng: metrc: [1] stressor       bogo ops real time  usr time  sys time   bogo "
		 "ops/s     bogo ops/s\n"
		 "stress-ng: metrc: [1]                           (secs)    (secs)    (secs)   (real "
		 "time) (usr+sys time)\n"
		 "stress-ng: metrc: [1] cpu 12 x 1 1 1 1\n",
		 "in:3:", "column 3"},
		{"fio", "garbage\n", "in:1:", "not fio"},
		{"fio", "note: a line fio prints\n{\"jobs\": 3}\n", "in:2:", "no \"jobs\" list"},
		{"fio", "{\"jobs\": [{\"jobname\": \"x\",\n \"read\": {\"bw\": \"fast\", \"iops\": 1}}]}",
		 "in:1:", "jobs[0].read"},
		{"fio", "{\"jobs\": [{\"read\": {}}]}", "in:1:", "jobname"},
		{"fio", "{\"jobs\": [\n{\"jobname\": \"x\"},\n", "in:3:", "column"},
		{"redis-benchmark", "\"test\",\"rps\"\n\"SET\",\"fast\"\n", "in:2:",
		 "SET: rps \"fast\" is not a number"},
		{"redis-benchmark", "\"SET\",\"12\n", "in:1:", "CSV"},
		{"redis-benchmark", "\"test\",\"r p s\"\n", "in:1:", "column name"},
		{"redis-benchmark", "\"SET\",\"1\",\"2\"\n", "in:1:", "3 fields"},
		{"pgbench", "transaction type: x\nlatency average = fast ms\n", "in:2:",
		 "latency average"},
		{"pgbench", "tps = many (without initial connection time)\n", "in:1:", "tps"},
		{"pgbench", "number of transactions actually processed: x\n", "in:1:",
		 "transactions processed"},
		{"hackbench", "Time: soon\n", "in:1:", "not a time"},
		{"hackbench",
		 "Running in process mode with 4 groups using 40 file descriptors each (== lots "
		 "tasks)\n",
		 "in:1:", "tasks"},
		{"hackbench", "Running in process mode with (== 4 tasks)\nEach sender will pass x\n",
		 "in:2:", "messages"},
		{"memtier", "{\"ALL STATS\": {\"Sets\": {\"Ops/sec\": \"x\"}}}", "in:1:",
		 "ALL STATS.Sets: no number \"Ops/sec\""},
		{"memtier", "{\n\"x\": 1\n}", "in:1:", "no \"ALL STATS\""},
		{"memtier", "{\"ALL STATS\": {},\n \"ALL STATS\": {}}", "in:2:", "duplicate"},
		{"memtier", "{\"ALL STATS\": {\"SET\": [{\"<=msec\": -1, \"percent\": 1}]}}", "in:1:",
		 "\"SET\"[0]"},
		{"memtier", "ALL STATS\nType  Ops/sec\nSets 1 2\n", "in:3:", "Totals row"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct parse_ctx pc;
		parse_ctx_init(&pc, "in");
		cr_expect_eq(parse_run(parser_find(rows[i].format), &pc, rows[i].text,
				       strlen(rows[i].text)),
			     -1, "%s accepted: %s", rows[i].format, rows[i].text);
		cr_expect(!strncmp(pc.err, rows[i].where, strlen(rows[i].where)) &&
				  strstr(pc.err, rows[i].says),
			  "%s: \"%s\" should start with %s and say %s", rows[i].format, pc.err,
			  rows[i].where, rows[i].says);
		cr_expect_eq(json_object_size(parse_metrics(&pc)), 0);
		parse_ctx_release(&pc);
	}
}

/* Every fixture cut at many points and with bytes flipped: no crash, and a
 * failure names the file (ASan and UBSan watch the same run). */
Test(tools, cut_and_flipped_fixtures_never_crash)
{
	for (size_t i = 0; i < NFIXTURES; i++) {
		const struct parser *p = parser_find(fixtures[i].format);
		size_t len, step;
		char *text = slurp(fixtures[i].file, &len);

		step = len / 61 + 1;
		for (size_t cut = 0; cut <= len; cut += step) {
			struct parse_ctx pc;
			char *copy = malloc(cut + 1);

			memcpy(copy, text, cut);
			copy[cut] = '\0';
			if (cut > 10)
				copy[cut / 3] = (char)(copy[cut / 3] ^ 0x21);
			parse_ctx_init(&pc, fixtures[i].file);
			if (parse_run(p, &pc, copy, cut))
				cr_assert(!strncmp(pc.err, fixtures[i].file, strlen(fixtures[i].file)),
					  "message \"%s\" does not name the file", pc.err);
			parse_ctx_release(&pc);
			free(copy);
		}
		free(text);
	}
}

/*
 * kperf-collect itself: `parse` of a cut output exits 65 naming file and line
 * and prints no run; `import` sends nothing (with the server away it would
 * spool what it meant to send, and the spool stays empty), while the whole
 * output is spooled the same way.
 */
Test(tools, the_cli_exits_65_and_sends_nothing_for_a_cut_output, .timeout = 120)
{
	char dir[4096], path[4200], spool[4200], server[64], where[4300];

	tu_tmpdir(dir, sizeof(dir));
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	snprintf(server, sizeof(server), "http://127.0.0.1:%d", harness_closed_port());
	for (size_t i = 0; i < NCUTS; i++) {
		const char *parse[] = {"parse", "--format", cuts[i].format, path, NULL};
		const char *import[] = {"--server", server, "--token", "t", "--spool", spool,
					"import", "--format", cuts[i].format, path, NULL};
		size_t len, nlines;
		char *text = cut_text(i, &len, &nlines), *out, *err;
		int rc;

		snprintf(path, sizeof(path), "%s/cut-%zu", dir, i);
		tu_write(dir, strrchr(path, '/') + 1, text);
		snprintf(where, sizeof(where), "%s:%zu:", path, nlines);
		rc = tu_collect(parse, NULL, &out, &err);
		cr_expect_eq(rc, 65, "%s: parse exit %d: %s", cuts[i].file, rc, err);
		cr_expect(strstr(err, where) != NULL, "%s: no %s in: %s", cuts[i].file, where, err);
		cr_expect_eq(out[0], '\0', "%s: parse printed a run: %s", cuts[i].file, out);
		free(out);
		free(err);
		rc = tu_collect(import, NULL, &out, &err);
		cr_expect_eq(rc, 65, "%s: import exit %d: %s", cuts[i].file, rc, err);
		cr_expect_eq(tu_count_files(spool, ".json"), 0, "%s: a run was sent", cuts[i].file);
		free(out);
		free(err);
		free(text);
	}
	{
		/* the control: the whole output is a run, spooled for the absent server */
		const char *import[] = {"--server", server, "--token", "t", "--spool", spool,
					"import", "--format", "pgbench", FIX "pgbench/tpcb", NULL};
		char *out, *err;
		int rc = tu_collect(import, NULL, &out, &err);
		cr_expect_eq(rc, 0, "%s", err);
		cr_expect_eq(tu_count_files(spool, ".json"), 1);
		free(out);
		free(err);
	}
}

static struct kperfd K;

static void post_setup(void)
{
	kperfd_start(&K, NULL);
}

static void post_teardown(void)
{
	kperfd_stop(&K);
}

TestSuite(tools_post, .init = post_setup, .fini = post_teardown, .timeout = 180);

/* What each fixture becomes is a run kperfd stores, units and directions included. */
Test(tools_post, kperfd_stores_the_run_of_every_fixture)
{
	for (size_t i = 0; i < NFIXTURES; i++) {
		char param[300], path[300], get[400];
		const char *args[] = {"--machine", "lab-tools", "parse", "--format",
				      fixtures[i].format, "--param", param, path, NULL};
		char *out, *err;
		json_t *doc, *sent;
		struct resp r;
		int rc;

		snprintf(param, sizeof(param), "fixture=%s", fixtures[i].file);
		for (char *s = param; *s; s++)
			if (*s == '/')
				*s = '-';
		snprintf(path, sizeof(path), FIX "%s", fixtures[i].file);
		rc = tu_collect(args, NULL, &out, &err);
		cr_assert_eq(rc, 0, "%s: %s", fixtures[i].file, err);
		sent = json_loads(out, 0, NULL);
		cr_assert_not_null(sent, "%s", out);
		http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, out, &r);
		cr_expect_eq(r.status, 201, "%s: %ld %s", fixtures[i].file, r.status, r.body);
		resp_release(&r);
		snprintf(get, sizeof(get), "/api/v1/runs/%s",
			 json_string_value(json_object_get(sent, "run_id")));
		http_get(&K, get, &r);
		cr_assert_eq(r.status, 200, "%s: %s", get, r.body);
		doc = resp_json(&r);
		cr_expect_eq(json_object_size(json_object_get(doc, "metrics")), fixtures[i].nmetrics,
			     "%s: stored %zu metrics", fixtures[i].file,
			     json_object_size(json_object_get(doc, "metrics")));
		json_decref(doc);
		resp_release(&r);
		json_decref(sent);
		free(out);
		free(err);
	}
}
