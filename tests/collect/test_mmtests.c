/*
 * test_mmtests.c - the mmtests-sysbench directory format: the fixture tree
 * tests/fixtures/collect/mmtests-sysbench (mmtests' work/log/<run>/iter-N/
 * sysbench/logs/sysbench-raw-<threads>-<i> layout, sysbench 0.4.12 output)
 * read directly and through `kperf-collect parse`, broken trees, and
 * `import` into a real kperfd: one run per sysbench execution.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/parse/mmtests.h"
#include "tests/integration/harness.h"
#include "tests/collect/testutil.h"

#define RUN_DIR "tests/fixtures/collect/mmtests-sysbench/work/log/sysbench-5.9.0-rc2"
#define SHA "1431d4d11abb265e79cd44bed2f5ea93f1bcc57b"

/* The fixture's runs in the order they are read, with figures from their logs. */
static const struct {
	const char *tag, *threads;
	double tps, p95_ms, total_time;
} runs[] = {
	{"iter0-t1-1", "1", 407.64, 3.11, 24.5316},  {"iter0-t1-2", "1", 414.62, 3.05, 24.1187},
	{"iter0-t4-1", "4", 1011.72, 5.87, 9.8842},  {"iter0-t4-2", "4", 996.11, 5.99, 10.0391},
	{"iter1-t1-1", "1", 401.89, 3.16, 24.8823},  {"iter1-t1-2", "1", 406.45, 3.12, 24.6034},
	{"iter1-t4-1", "4", 1030.80, 5.76, 9.7012},  {"iter1-t4-2", "4", 1004.82, 5.93, 9.9520},
};
#define NRUNS (sizeof(runs) / sizeof(runs[0]))
/* What the sysbench parser makes of a 0.4.12 OLTP report. */
#define NMETRICS 22

static double first(json_t *metrics, const char *name)
{
	json_t *v = json_array_get(json_object_get(metrics, name), 0);
	cr_assert(json_is_number(v), "no value for %s", name);
	return json_number_value(v);
}

Test(mmtests, reads_one_run_per_sysbench_log)
{
	struct dir_runs r;
	char err[1024];
	json_t *run;
	size_t i;

	dir_runs_init(&r);
	cr_assert_eq(mmtests_sysbench_read(RUN_DIR, &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(json_array_size(r.runs), NRUNS);
	json_array_foreach(r.runs, i, run) {
		json_t *m = json_object_get(run, "metrics");
		cr_expect_str_eq(json_string_value(json_object_get(run, "tag")), runs[i].tag);
		cr_expect_str_eq(json_string_value(json_object_get(json_object_get(run, "params"),
								   "nr_threads")),
				 runs[i].threads, "%s", runs[i].tag);
		cr_expect_eq(json_object_size(m), NMETRICS, "%s", runs[i].tag);
		cr_expect_float_eq(first(m, "sysbench.transactions_per_sec"), runs[i].tps, 1e-9,
				   "%s", runs[i].tag);
		cr_expect_float_eq(first(m, "sysbench.latency_95_percentile_ms"), runs[i].p95_ms,
				   1e-9, "%s", runs[i].tag);
		cr_expect_float_eq(first(m, "sysbench.total_time"), runs[i].total_time, 1e-9, "%s",
				   runs[i].tag);
		cr_expect_float_eq(first(m, "sysbench.transactions"), 10000, 1e-9);
		cr_expect_float_eq(first(m, "sysbench.read_write_requests"), 180000, 1e-9);
		cr_expect_eq(json_array_size(json_object_get(m, "sysbench.total_time")), 1,
			     "one sysbench execution, one value");
	}
	cr_expect_str_eq(json_string_value(json_object_get(r.units,
							   "sysbench.transactions_per_sec")),
			 "tps");
	dir_runs_release(&r);

	/* an iter-N directory given directly keeps its N */
	dir_runs_init(&r);
	cr_assert_eq(mmtests_sysbench_read(RUN_DIR "/iter-1", &r, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(json_array_size(r.runs), 4);
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(r.runs, 0), "tag")),
			 "iter1-t1-1");
	dir_runs_release(&r);
}

Test(mmtests, broken_trees_name_the_file)
{
	static const struct {
		const char *rel, *text; /* a file written into a fresh tree */
		const char *says;
	} rows[] = {
		{NULL, NULL, "no sysbench-raw-<threads>-<iteration> logs"},
		{"iter-0/sysbench/logs/sysbench-raw-2-1.gz", "x", "compressed logs"},
		{"iter-0/sysbench/logs/sysbench-raw-2-1", "sysbench 0.4.12\nDone.\n",
		 "sysbench-raw-2-1:2: no sysbench results"},
		/* names that only look like logs are not read */
		{"iter-0/sysbench/logs/sysbench-raw-x-1", "junk", "no sysbench-raw-"},
		{"iter-0/sysbench/logs/sysbench-raw-1-2-3", "junk", "no sysbench-raw-"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char dir[4096], *out, *err;
		const char *args[] = {"parse", "--format", "mmtests-sysbench", dir, NULL};
		int rc;

		tu_tmpdir(dir, sizeof(dir));
		if (rows[i].rel)
			tu_write(dir, rows[i].rel, rows[i].text);
		rc = tu_collect(args, NULL, &out, &err);
		cr_expect_eq(rc, 65, "row %zu: exit %d: %s", i, rc, err);
		cr_expect(strstr(err, rows[i].says) != NULL, "row %zu: no \"%s\" in %s", i,
			  rows[i].says, err);
		free(out);
		free(err);
	}
	{
		/* the same iterations twice: their run_ids would collide */
		const char *args[] = {"parse", "--format", "mmtests-sysbench", RUN_DIR,
				      RUN_DIR "/iter-0", NULL};
		char *out, *err;
		int rc = tu_collect(args, NULL, &out, &err);
		cr_expect_eq(rc, 65, "%s", err);
		cr_expect(strstr(err, "the same iteration") != NULL, "%s", err);
		free(out);
		free(err);
	}
}

Test(mmtests, parse_prints_runs_with_params_and_tagged_ids)
{
	const char *args[] = {"--machine", "lab1", "parse", "--format", "mmtests-sysbench",
			      "--param", "db=postgres", RUN_DIR, NULL};
	char *out, *err;
	json_t *doc, *list, *run;
	size_t i;
	int rc = tu_collect(args, NULL, &out, &err);

	cr_assert_eq(rc, 0, "%s", err);
	doc = json_loads(out, 0, NULL);
	cr_assert_not_null(doc, "%s", out);
	list = json_object_get(doc, "runs");
	cr_assert_eq(json_array_size(list), NRUNS, "%s", out);
	json_array_foreach(list, i, run) {
		const char *id = json_string_value(json_object_get(run, "run_id"));
		json_t *test = json_object_get(run, "test"), *params = json_object_get(test, "params");
		size_t n = strlen(id), tl = strlen(runs[i].tag);

		cr_expect(n > tl && id[n - tl - 1] == '.' && !strcmp(id + n - tl, runs[i].tag),
			  "run_id %s ends in .%s", id, runs[i].tag);
		cr_expect(!strncmp(id, "lab1-", 5), "%s", id);
		cr_expect_str_eq(json_string_value(json_object_get(test, "suite")), "sysbench");
		cr_expect_str_eq(json_string_value(json_object_get(params, "nr_threads")),
				 runs[i].threads);
		cr_expect_str_eq(json_string_value(json_object_get(params, "db")), "postgres",
				 "the command line's params stay");
		cr_expect_float_eq(first(json_object_get(run, "metrics"),
					 "sysbench.transactions_per_sec"),
				   runs[i].tps, 1e-9);
	}
	json_decref(doc);
	free(out);
	free(err);
}

KPERFD_SUITE(mmtests_e2e, 180);

Test(mmtests_e2e, import_stores_one_run_per_iteration)
{
	char url[64], dir[4096], spool[4200], path[400];
	const char *args[] = {"--server", url, "--token", TOKEN_COLLECTOR, "--machine", "lab1",
			      "--spool", spool, "import", "--format", "mmtests-sysbench",
			      "--commit", SHA, "--release", "5.9.0-rc2", RUN_DIR, NULL};
	const char *p;
	char *out, *err;
	struct resp r;
	json_t *doc;
	int rc, stored = 0;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", K.port);
	tu_tmpdir(dir, sizeof(dir));
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	rc = tu_collect(args, NULL, &out, &err);
	cr_assert_eq(rc, 0, "exit %d\n%s\n%s", rc, out, err);
	for (p = out; (p = strstr(p, " stored (HTTP 201)")); p++)
		stored++;
	cr_expect_eq(stored, (int)NRUNS, "%s", out);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), (long)NRUNS);

	/* the third run: 4 threads, iter-0, sysbench's first execution */
	p = strstr(out, ".iter0-t4-1 ");
	cr_assert_not_null(p, "%s", out);
	{
		const char *start = p;
		while (start > out && start[-1] != ' ')
			start--;
		snprintf(path, sizeof(path), "/api/v1/runs/%.*s", (int)(p - start) + 11, start);
	}
	http_get(&K, path, &r);
	cr_assert_eq(r.status, 200, "%s: %s", path, r.body);
	doc = resp_json(&r);
	cr_expect_str_eq(json_string_value(json_object_get(
				 json_object_get(json_object_get(doc, "test"), "params"), "nr_threads")),
			 "4");
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(doc, "kernel"),
							   "commit")),
			 SHA);
	cr_expect_float_eq(first(json_object_get(doc, "metrics"), "sysbench.transactions_per_sec"),
			   1011.72, 1e-9);
	cr_expect_eq(json_object_size(json_object_get(doc, "metrics")), NMETRICS);
	json_decref(doc);
	resp_release(&r);
	free(out);
	free(err);
}
