/*
 * test_parsers_live.c - the benchmark tools installed here (make deps,
 * .ci/run), run for a second each under `kperf-collect run --dry-run`: the
 * parser of the suite reads what this machine's version prints. A tool that
 * is not installed skips its test, saying which package brings it.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/harness.h"
#include "tests/collect/testutil.h"

TestSuite(live, .timeout = 120);

static void need(const char *tool, const char *package)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "command -v %s > /dev/null 2>&1", tool);
	if (system(cmd))
		cr_skip_test("%s is not installed (Debian 12 package %s; make deps installs it)", tool,
			     package);
}

/* `run --suite suite --dry-run -- sh -c script`; the metric's first value, asserted > 0. */
static void run_expect(const char *suite, const char *script, const char *const *metrics)
{
	const char *args[] = {"--machine", "live", "run", "--suite", suite, "--dry-run", "--quiet",
			      "--", "sh", "-c", script, NULL};
	char *out, *err;
	json_t *doc, *m;
	int rc = tu_collect(args, NULL, &out, &err);

	cr_assert_eq(rc, 0, "%s: exit %d\n%s\n%s", suite, rc, out, err);
	/* run.c says "output of iteration N:LINE: ..." when the parser fails */
	cr_assert(strstr(err, "output of iteration") == NULL, "%s: the parser failed: %s", suite,
		  err);
	doc = json_loads(out, 0, NULL);
	cr_assert_not_null(doc, "%s: %s", suite, out);
	m = json_object_get(doc, "metrics");
	for (; *metrics; metrics++) {
		json_t *v = json_array_get(json_object_get(m, *metrics), 0);
		cr_expect(json_is_number(v) && json_number_value(v) > 0, "%s: no %s > 0 in %s",
			  suite, *metrics, out);
		cr_expect_not_null(json_object_get(json_object_get(doc, "directions"), *metrics),
				   "%s: %s has no direction", suite, *metrics);
	}
	json_decref(doc);
	free(out);
	free(err);
}

Test(live, sysbench_cpu_and_memory)
{
	static const char *const cpu[] = {"sysbench.events_per_sec", "sysbench.total_events",
					  "sysbench.latency_avg_ms", NULL};
	static const char *const mem[] = {"sysbench.mib_per_sec", "sysbench.operations_per_sec",
					  NULL};

	need("sysbench", "sysbench");
	run_expect("sysbench", "sysbench cpu --cpu-max-prime=2000 --threads=1 --time=1 run", cpu);
	run_expect("sysbench",
		   "sysbench memory --memory-total-size=256M --threads=1 --time=1 run", mem);
}

Test(live, sysbench_fileio)
{
	static const char *const io[] = {"sysbench.read_mib_per_sec", "sysbench.write_mib_per_sec",
					 "sysbench.reads_per_sec", NULL};
	char dir[4096], script[9000];

	need("sysbench", "sysbench");
	tu_tmpdir(dir, sizeof(dir));
	snprintf(script, sizeof(script),
		 "cd '%s' && sysbench fileio --file-total-size=8M --file-num=2 prepare >/dev/null && "
		 "sysbench fileio --file-total-size=8M --file-num=2 --file-test-mode=rndrw --time=1 "
		 "run && sysbench fileio --file-total-size=8M --file-num=2 cleanup >/dev/null",
		 dir);
	run_expect("sysbench", script, io);
}

Test(live, stress_ng_table_brief_table_and_yaml)
{
	static const char *const cpu[] = {"stress-ng.cpu.ops", "stress-ng.cpu.ops_per_sec",
					  "stress-ng.cpu.ops_per_sec_usr_sys", NULL};
	char dir[4096], script[9000];

	need("stress-ng", "stress-ng");
	run_expect("stress-ng", "stress-ng --cpu 1 --timeout 1s --metrics", cpu);
	run_expect("stress-ng", "stress-ng --cpu 1 --timeout 1s --metrics --log-brief", cpu);
	tu_tmpdir(dir, sizeof(dir));
	snprintf(script, sizeof(script),
		 "stress-ng --cpu 1 --timeout 1s --metrics --yaml '%s/m.yml' >/dev/null 2>&1 && "
		 "cat '%s/m.yml'",
		 dir, dir);
	run_expect("stress-ng", script, cpu);
}

Test(live, fio_json)
{
	static const char *const w[] = {"fio.w.write_bw_MBps", "fio.w.write_iops",
					"fio.w.write_clat_99%_ns", "fio.workload", NULL};
	char dir[4096], script[9000];

	need("fio", "fio");
	tu_tmpdir(dir, sizeof(dir));
	snprintf(script, sizeof(script),
		 "fio --name=w --directory='%s' --rw=write --bs=64k --size=4M --ioengine=psync "
		 "--output-format=json",
		 dir);
	run_expect("fio", script, w);
}

Test(live, hackbench)
{
	static const char *const h[] = {"hackbench.time", "hackbench.throughput", NULL};

	need("hackbench", "rt-tests");
	run_expect("hackbench", "hackbench -g 1 -l 100", h);
}

Test(live, redis_benchmark_csv)
{
	static const char *const r[] = {"redis-benchmark.SET.rps", "redis-benchmark.GET.rps",
					"redis-benchmark.GET.p99_latency_ms", NULL};
	char script[1024];
	int port;

	need("redis-benchmark", "redis-tools");
	need("redis-server", "redis-server");
	port = harness_free_port();
	/* a server of the test's own on loopback, stopped by its pid; up within
	 * 60 s (a loaded machine), else the script fails saying so */
	snprintf(script, sizeof(script),
		 "redis-server --port %d --bind 127.0.0.1 --save '' --appendonly no "
		 ">/dev/null 2>&1 & pid=$!; end=$(($(date +%%s) + 60)); "
		 "until redis-cli -p %d ping >/dev/null 2>&1; do "
		 "if ! kill -0 $pid 2>/dev/null || [ $(date +%%s) -ge $end ]; then "
		 "echo 'redis-server did not answer within 60 s' >&2; kill $pid; exit 1; fi; "
		 "sleep 0.1; done; "
		 "redis-benchmark -p %d -n 2000 -c 4 -t set,get --csv; rc=$?; kill $pid; "
		 "wait $pid; exit $rc",
		 port, port, port);
	run_expect("redis-benchmark", script, r);
}
