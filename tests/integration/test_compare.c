/*
 * test_compare.c - GET /api/v1/compare end to end: the MGLRU seed's Welch
 * CIs and R's p-values through the API, qualifiers, refs, filters, the
 * environment diff, and the LKP / mmtests / CSV texts on hand-computed data.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/harness.h"

KPERFD_SUITE(compare, 120);

static void post(const char *body)
{
	harness_post_ok(&K, "/api/v1/runs", TOKEN_COLLECTOR, body);
}

static void post_mglru(void)
{
	json_t *fx = json_load_file("tests/fixtures/mglru-ycsb.json", 0, NULL);
	json_t *runs = json_array(), *bymem, *bydist, *vals, *batch;
	const char *kernel, *mem, *dist;
	char *body;

	cr_assert_not_null(fx);
	json_object_foreach(json_object_get(fx, "samples"), kernel, bymem) {
		const char *release = json_string_value(json_object_get(
			json_object_get(json_object_get(fx, "kernels"), kernel), "release"));
		json_object_foreach(bymem, mem, bydist) {
			const char *gb = json_string_value(json_object_get(
				json_object_get(json_object_get(fx, "params"), mem), "cacheSizeGB"));
			json_object_foreach(bydist, dist, vals) {
				char run_id[128];
				snprintf(run_id, sizeof(run_id), "%s-%s-%s", kernel, mem, dist);
				json_array_append_new(
					runs, json_pack("{s:s,s:{s:s},s:{s:s},s:{s:s,s:{s:s,s:s}},s:{s:O}}",
							"run_id", run_id, "machine", "name", "mongo",
							"kernel", "release", release, "test", "suite",
							"ycsb", "params", "cacheSizeGB", gb, "distribution",
							dist, "metrics", "ycsb.total_throughput_ops/s",
							vals));
			}
		}
	}
	batch = json_pack("{s:o}", "runs", runs);
	body = json_dumps(batch, 0);
	post(body);
	free(body);
	json_decref(batch);
	json_decref(fx);
}

static json_t *compare(const char *query, long want)
{
	char path[1024];

	snprintf(path, sizeof(path), "/api/v1/compare?%s", query);
	return harness_get_json(&K, path, want);
}

/* The body of a 200 answer to a compare (malloc'd); text: a text/ one. */
static char *compare_body(const char *query, int text)
{
	char path[1024];
	struct resp r;
	char *body;

	snprintf(path, sizeof(path), "/api/v1/compare?%s", query);
	http_get(&K, path, &r);
	cr_assert_eq(r.status, 200, "%s: %ld %s", path, r.status, r.body);
	if (text)
		cr_expect(strstr(r.content_type, "text/") != NULL, "%s", r.content_type);
	body = r.body;
	r.body = NULL;
	resp_release(&r);
	return body;
}

/* The row for distribution dist (and cacheSizeGB gb, when given). */
static json_t *row_for(json_t *rows, const char *gb, const char *dist)
{
	size_t i;
	json_t *row;
	json_array_foreach(rows, i, row) {
		json_t *p = json_object_get(row, "params");
		if (!strcmp(json_string_value(json_object_get(p, "distribution")), dist) &&
		    (!gb || !strcmp(json_string_value(json_object_get(p, "cacheSizeGB")), gb)))
			return row;
	}
	cr_assert_fail("no row for %s %s", gb ? gb : "-", dist);
	return NULL;
}

struct expect_ci {
	const char *gb, *dist;
	const char *ci; /* the seed's "[lo, hi]" */
	double p;       /* R's printed p, 4 significant digits; 0: "< 2.2e-16" */
};

static void check_cis(json_t *j, const struct expect_ci *e, size_t n)
{
	json_t *rows = json_object_get(j, "rows");

	cr_assert_eq(json_array_size(rows), n);
	for (size_t i = 0; i < n; i++) {
		json_t *row = row_for(rows, e[i].gb, e[i].dist);
		json_t *w = json_object_get(row, "welch");
		json_t *ci = json_object_get(w, "ci95_pct");
		double p = json_number_value(json_object_get(w, "p_value"));
		char got[64];

		snprintf(got, sizeof(got), "[%.2f, %.2f]", json_number_value(json_array_get(ci, 0)),
			 json_number_value(json_array_get(ci, 1)));
		cr_expect_str_eq(got, e[i].ci, "%s %s", e[i].gb ? e[i].gb : "", e[i].dist);
		if (e[i].p > 0) {
			char a[32], b[32];
			snprintf(a, sizeof(a), "%.3e", p);
			snprintf(b, sizeof(b), "%.3e", e[i].p);
			cr_expect_str_eq(a, b, "p of %s %s", e[i].gb ? e[i].gb : "", e[i].dist);
		} else {
			cr_expect_lt(p, 2.2e-16);
		}
	}
}

Test(compare, mglru_seed_tables_through_the_api)
{
	/* Table 1 of seed 002: 5.14 vs 5.14 + MGLRU, per memory size and distribution */
	static const struct expect_ci table1[] = {
		{"50", "exp", "[2.23, 3.44]", 1.671e-08},  {"50", "uni", "[6.97, 9.73]", 9.287e-09},
		{"50", "zip", "[2.16, 3.55]", 5.833e-07},  {"60", "exp", "[8.83, 10.03]", 2.329e-16},
		{"60", "uni", "[21.12, 23.14]", 0},	   {"60", "zip", "[5.53, 6.46]", 4.049e-13},
	};
	/* Table 2: 50 GB vs 60 GB of cache, per kernel (qualified refs) */
	static const struct expect_ci table2_base[] = {
		{NULL, "exp", "[-4.10, -2.77]", 2.439e-09},
		{NULL, "uni", "[-11.20, -8.46]", 1.847e-09},
		{NULL, "zip", "[0.36, 1.83]", 0.006252},
	};
	static const struct expect_ci table2_mglru[] = {
		{NULL, "exp", "[2.27, 3.25]", 7.84e-10},
		{NULL, "uni", "[0.78, 2.50]", 0.0008807},
		{NULL, "zip", "[3.81, 4.54]", 9.257e-14},
	};
	json_t *j;

	post_mglru();
	j = compare("base=5.14.0&target=5.14.0-mglru", 200);
	check_cis(j, table1, 6);
	cr_expect_str_eq(json_string_value(json_object_get(row_for(json_object_get(j, "rows"), "60",
								     "uni"),
							  "verdict")),
			 "improvement");
	cr_expect_eq(json_number_value(json_object_get(json_object_get(j, "base"), "runs")), 6);
	cr_expect_eq(json_array_size(json_object_get(j, "environment_diff")), 0);
	json_decref(j);

	j = compare("base=5.14.0:cacheSizeGB=50&target=5.14.0:cacheSizeGB=60", 200);
	check_cis(j, table2_base, 3);
	/* less cache is slower: exp and uni regress, zip improves */
	cr_expect_str_eq(json_string_value(json_object_get(row_for(json_object_get(j, "rows"), NULL,
								     "uni"),
							  "verdict")),
			 "regression");
	json_decref(j);
	j = compare("base=5.14.0-mglru:cacheSizeGB=50&target=5.14.0-mglru:cacheSizeGB=60", 200);
	check_cis(j, table2_mglru, 3);
	json_decref(j);

	/* filters: params, significant, metric glob */
	j = compare("base=5.14.0&target=5.14.0-mglru&params=cacheSizeGB=60,distribution=zip", 200);
	cr_expect_eq(json_array_size(json_object_get(j, "rows")), 1);
	json_decref(j);
	j = compare("base=5.14.0&target=5.14.0-mglru&metric=ycsb.*&significant=1", 200);
	cr_expect_eq(json_array_size(json_object_get(j, "rows")), 6);
	json_decref(j);
	j = compare("base=5.14.0&target=5.14.0-mglru&metric=nothing.*", 200);
	cr_expect_eq(json_array_size(json_object_get(j, "rows")), 0);
	json_decref(j);
}

#define C_BASE "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb0"
#define C_NEW "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb1"

/* Three runs per kernel; throughput +10%, a noisy monitor, an lru_lock row. */
static void post_lkp_data(void)
{
	static const double tput[2][3] = {{100, 101, 99}, {110, 111, 109}};
	static const double noise[2][3] = {{5000, 5100, 4900}, {5050, 4950, 5000}};
	static const double lock[2][3] = {{13.11, 13.0, 13.2}, {1.79, 1.8, 1.7}};

	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < 3; i++) {
			char body[2048];
			snprintf(body, sizeof(body),
				 "{\"run_id\":\"lkp-%d-%d\",\"machine\":{\"name\":\"lkp-skl\","
				 "\"cpu_model\":\"Xeon\",\"memory_mb\":%d},"
				 "\"kernel\":{\"commit\":\"%s\",\"subject\":\"%s\","
				 "\"cmdline\":\"%s\",\"config\":{\"CONFIG_LRU_GEN\":\"%s\"}},"
				 "\"variant\":{\"thp\":\"never\"},"
				 "\"test\":{\"suite\":\"vm-scalability\",\"params\":"
				 "{\"test\":\"lru-file-mmap-read\",\"nr_threads\":\"1\"}},"
				 "\"metrics\":{\"vm-scalability.throughput\":[%g],"
				 "\"proc-vmstat.pgscan_kswapd\":[%g],"
				 "\"perf-profile.calltrace.cycles-pp._raw_spin_lock_irqsave."
				 "folio_lruvec_lock_irqsave\":[%g]}}",
				 k, i, k ? 65536 : 32768, k ? C_NEW : C_BASE,
				 k ? "mm: new" : "mm: base", k ? "quiet" : "quiet debug",
				 k ? "y" : "n", tput[k][i], noise[k][i], lock[k][i]);
			post(body);
		}
	}
}

Test(compare, lkp_text_rows_on_hand_computed_data)
{
	char *text;

	post_lkp_data();
	text = compare_body("base=" C_BASE "&target=" C_NEW "&format=lkp", 1);
	/* means 100 and 110: "%10.2f", six blanks for a ± under 2% (0.82%, 0.74%),
	 * "%+10.1f%%", a blank, the target, six blanks, two spaces, the name */
	cr_expect(strstr(text, "    100.00"
			       "      "
			       "     +10.0%"
			       " "
			       "    110.00"
			       "      "
			       "  vm-scalability.throughput\n") != NULL,
		  "%s", text);
	/* perf-profile: absolute change 1.763 - 13.103 = -11.3, a blank where '%'
	 * would be; the target's population stddev 0.0450/1.763 = 2.55%: "±  2%" */
	cr_expect(strstr(text, "     13.10"
			       "      "
			       "     -11.3 "
			       " "
			       "      1.76"
			       " \u00b1  2%"
			       "  perf-profile.calltrace.cycles-pp._raw_spin_lock_irqsave."
			       "folio_lruvec_lock_irqsave\n") != NULL,
		  "%s", text);
	/* 5000 vs 5000: no row */
	cr_expect_null(strstr(text, "pgscan_kswapd"), "%s", text);
	cr_expect(strstr(text, "commit: \n  bbbbbbbbbb (\"mm: base\")\n  bbbbbbbbbb (\"mm: new\")\n") !=
			  NULL,
		  "%s", text);
	/* axes sorted by key */
	cr_expect(strstr(text, "nr_threads/tbox_group/test/testcase/thp:\n"
			       "  1/lkp-skl/lru-file-mmap-read/vm-scalability/never\n") != NULL,
		  "%s", text);
	cr_expect(strstr(text, "         %stddev     %change         %stddev\n") != NULL, "%s", text);
	free(text);
}

Test(compare, mmtests_text_on_hand_computed_data)
{
	char *text;

	post_lkp_data();
	text = compare_body("base=" C_BASE "&target=" C_NEW
			    "&format=mmtests&metric=vm-scalability.throughput",
			    1);
	/* operand nr_threads = 1; min 99 -> 109: +10.10%; Hmean of 99,100,101 = 99.99 */
	cr_expect(strstr(text, "Min       1       99.00 (   0.00%)      109.00 (  10.10%)\n") != NULL,
		  "%s", text);
	cr_expect(strstr(text, "Hmean     1       99.99 (   0.00%)      109.99 *  10.00%*\n") != NULL,
		  "%s", text);
	cr_expect(strstr(text, "Stddev    1        1.00 (   0.00%)        1.00 (   0.00%)\n") != NULL,
		  "%s", text);
	cr_expect(strstr(text, "Max       1      101.00 (   0.00%)      111.00 (   9.90%)\n"
			       "BHmean-50 1      101.00 (   0.00%)      111.00 (   9.90%)\n") != NULL,
		  "%s", text);
	free(text);

	text = compare_body("base=" C_BASE "&target=" C_NEW "&format=csv&metric=vm-scalability.*", 1);
	cr_expect(strstr(text, "lkp-skl,vm-scalability,\"nr_threads=1,test=lru-file-mmap-read\","
			       "thp=never,vm-scalability.throughput,higher,") != NULL,
		  "%s", text);
	cr_expect(strstr(text, ",improvement\n") != NULL, "%s", text);
	free(text);
}

Test(compare, environment_diff_and_verdicts)
{
	json_t *j, *d, *row;
	size_t i;
	int saw_config = 0, saw_cmdline = 0, saw_mem = 0;

	post_lkp_data();
	j = compare("base=" C_BASE "&target=" C_NEW, 200);
	d = json_object_get(j, "environment_diff");
	json_array_foreach(d, i, row) {
		const char *kind = json_string_value(json_object_get(row, "kind"));
		const char *key = json_string_value(json_object_get(row, "key"));
		if (!strcmp(kind, "config") && !strcmp(key, "CONFIG_LRU_GEN")) {
			saw_config = 1;
			cr_expect_str_eq(json_string_value(json_array_get(json_object_get(row, "base"), 0)),
					 "n");
		}
		saw_cmdline |= !strcmp(kind, "cmdline");
		saw_mem |= !strcmp(kind, "machine") && !strcmp(key, "memory_mb");
		cr_expect(strcmp(kind, "variant"), "thp is the same on both sides");
	}
	cr_expect(saw_config && saw_cmdline && saw_mem, "%s", json_dumps(d, 0));
	json_array_foreach(json_object_get(j, "rows"), i, row) {
		const char *m = json_string_value(json_object_get(row, "metric"));
		const char *v = json_string_value(json_object_get(row, "verdict"));
		if (!strcmp(m, "vm-scalability.throughput"))
			cr_expect_str_eq(v, "improvement");
		else if (!strcmp(m, "proc-vmstat.pgscan_kswapd"))
			cr_expect_str_eq(v, "noise");
		else
			cr_expect_str_eq(v, "improvement", "%s: lock time fell", m);
	}
	cr_expect(json_is_true(json_object_get(json_array_get(json_object_get(j, "rows"), 0),
					       "lkp_changed")) ||
		  json_array_size(json_object_get(j, "rows")) == 3);
	json_decref(j);
	j = compare("base=" C_BASE "&target=" C_NEW "&significant=1", 200);
	cr_expect_eq(json_array_size(json_object_get(j, "rows")), 2);
	json_decref(j);
}

Test(compare, refs_and_bad_requests)
{
	static const char *const bad[][3] = {
		{"target=x", "base", "400"},
		{"base=" C_BASE, "target", "400"},
		{"base=nothing&target=" C_NEW, "base", "404"},
		{"base=" C_BASE "&target=nothing", "target", "404"},
		{"base=bbbbbbb&target=" C_NEW, "base", "400"},
		{"base=" C_BASE ":lru_gen&target=" C_NEW, "base", "400"},
		{"base=" C_BASE ":thp=always&target=" C_NEW, "base", "404"},
		{"base=" C_BASE "&target=" C_NEW "&format=xml", "format", "400"},
		{"base=" C_BASE "&target=" C_NEW "&significant=yes", "significant", "400"},
		{"base=" C_BASE "&target=" C_NEW "&params=test", "params", "400"},
		{"base=" C_BASE "&target=" C_NEW "&format=mmtests&operand=clients", "operand", "400"},
		{"base=" C_BASE "&target=1&target=2&target=3&target=4&target=5&target=6&target=7"
		 "&target=8&target=9",
		 "target", "400"},
	};
	json_t *j;

	post_lkp_data();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		j = compare(bad[i][0], strtol(bad[i][2], NULL, 10));
		cr_expect_str_eq(json_string_value(json_object_get(j, "field")), bad[i][1], "%s",
				 bad[i][0]);
		if (!strcmp(bad[i][0], "base=bbbbbbb&target=" C_NEW))
			cr_expect(strstr(json_string_value(json_object_get(j, "message")), C_BASE) &&
					  strstr(json_string_value(json_object_get(j, "message")), C_NEW),
				  "candidates listed: %s",
				  json_string_value(json_object_get(j, "message")));
		json_decref(j);
	}
	/* the same kernel as two targets: rows per target */
	j = compare("base=" C_BASE "&target=" C_NEW "&target=" C_NEW, 200);
	cr_expect_eq(json_array_size(json_object_get(j, "targets")), 2);
	cr_expect_eq(json_array_size(json_object_get(j, "rows")), 6);
	json_decref(j);
}

Test(compare, series_ref_means_its_last_patch)
{
	struct resp r;
	json_t *j;

	post_lkp_data();
	http_post_json(&K, "/api/v1/commits", TOKEN_COLLECTOR,
		       "[{\"sha\":\"" C_BASE "\",\"series\":\"lru v1\"},"
		       "{\"sha\":\"cccccccccccccccccccccccccccccccccccccccc\",\"parent\":\"" C_BASE "\","
		       "\"series\":\"lru v2\"},"
		       "{\"sha\":\"" C_NEW "\",\"parent\":\"cccccccccccccccccccccccccccccccccccccccc\","
		       "\"series\":\"lru v2\"}]",
		       &r);
	cr_assert_eq(r.status, 201, "%s", r.body);
	resp_release(&r);
	j = compare("base=lru%20v1&target=lru%20v2", 200);
	cr_expect_str_eq(json_string_value(json_object_get(
				 json_array_get(json_object_get(j, "targets"), 0), "commit")),
			 C_NEW);
	cr_expect_eq(json_array_size(json_object_get(j, "rows")), 3);
	json_decref(j);
	j = compare("base=" C_BASE "&target=lru", 200);
	cr_expect_str_eq(json_string_value(json_object_get(
				 json_array_get(json_object_get(j, "targets"), 0), "commit")),
			 C_NEW);
	json_decref(j);
}

/* The JSON row of a metric, or NULL. */
static json_t *row_of_metric(json_t *rows, const char *metric)
{
	for (size_t i = 0; i < json_array_size(rows); i++) {
		json_t *it = json_array_get(rows, i);
		if (!strcmp(json_string_value(json_object_get(it, "metric")), metric))
			return it;
	}
	return NULL;
}

/* A side whose runs arrived in different months reads each run's samples
 * from its own month's partition (the loader names the runs' arrival times
 * so PostgreSQL plans only those months). */
Test(compare, runs_of_a_side_in_different_months)
{
	PGconn *c;
	PGresult *r;
	json_t *j, *row;

	post_lkp_data();
	c = harness_db(&K);
	r = PQexec(c, "SELECT kperf_sample_partitions('2024-03-01Z', '2024-03-31Z');"
		      " WITH moved AS (UPDATE run SET received_at = '2024-03-15 12:00Z'"
		      "  WHERE run_id = 'lkp-0-1' RETURNING id)"
		      " UPDATE sample SET at = '2024-03-15 12:00Z' FROM moved WHERE run_id = moved.id");
	cr_assert_eq(PQresultStatus(r), PGRES_COMMAND_OK, "%s", PQresultErrorMessage(r));
	PQclear(r);
	PQfinish(c);
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM sample_202403"), 3);

	j = compare("base=" C_BASE "&target=" C_NEW, 200);
	row = row_of_metric(json_object_get(j, "rows"), "vm-scalability.throughput");
	cr_assert_not_null(row);
	cr_expect_eq(json_number_value(json_object_get(json_object_get(row, "base"), "n")), 3);
	cr_expect_eq(json_number_value(json_object_get(json_object_get(row, "base"), "mean")), 100);
	cr_expect_eq(json_number_value(json_object_get(json_object_get(row, "base"), "min")), 99);
	cr_expect_eq(json_number_value(json_object_get(json_object_get(row, "base"), "max")), 101);
	json_decref(j);
}

#define D_BASE "dddddddddddddddddddddddddddddddddddddde0"
#define D_NEW "dddddddddddddddddddddddddddddddddddddde1"

static const char *direction_of_row(json_t *rows, const char *metric)
{
	return json_string_value(json_object_get(row_of_metric(rows, metric), "direction"));
}

/* A row's direction: a run's "directions" first, then the metric's stored
 * direction (what the run that introduced it declared), then its name; the
 * metrics are read once for both sides. */
Test(compare, directions_from_runs_metrics_and_names)
{
	json_t *j, *rows;

	/* dx.widget_ops first comes without a direction: none is stored */
	post("{\"run_id\":\"dir-pre\",\"machine\":{\"name\":\"dir-box\"},"
	     "\"kernel\":{\"release\":\"6.1.0-dir\"},\"test\":{\"suite\":\"dirs-pre\"},"
	     "\"metrics\":{\"dx.widget_ops\":[1]}}");
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 2; i++) {
			char body[1024];
			/* the first run declares dx.score lower (stored with the
			 * metric); the base's runs say dx.widget_ops is lower,
			 * whatever its name says */
			snprintf(body, sizeof(body),
				 "{\"run_id\":\"dir-%d-%d\",\"machine\":{\"name\":\"dir-box\"},"
				 "\"kernel\":{\"commit\":\"%s\"},\"test\":{\"suite\":\"dirs\"},"
				 "\"directions\":{%s},"
				 "\"metrics\":{\"dx.score\":[%d],\"dx.plain\":[%d],"
				 "\"dx.req_latency\":[%d],\"dx.widget_ops\":[%d]}}",
				 k, i, k ? D_NEW : D_BASE,
				 !k && !i ? "\"dx.score\":\"lower\",\"dx.widget_ops\":\"lower\""
				 : !k	  ? "\"dx.widget_ops\":\"lower\""
					  : "",
				 10 + k + i, 20 + k + i, 30 + k + i, 40 + k + i);
			post(body);
		}
	j = compare("base=" D_BASE "&target=" D_NEW, 200);
	rows = json_object_get(j, "rows");
	cr_assert_eq(json_array_size(rows), 4, "%s", json_dumps(rows, 0));
	cr_expect_str_eq(direction_of_row(rows, "dx.score"), "lower");
	cr_expect_str_eq(direction_of_row(rows, "dx.plain"), "none");
	cr_expect_str_eq(direction_of_row(rows, "dx.req_latency"), "lower");
	cr_expect_str_eq(direction_of_row(rows, "dx.widget_ops"), "lower");
	json_decref(j);
	/* the other way round the base's runs say nothing: dx.widget_ops goes
	 * by its name, dx.score by what is stored */
	j = compare("base=" D_NEW "&target=" D_BASE, 200);
	rows = json_object_get(j, "rows");
	cr_expect_str_eq(direction_of_row(rows, "dx.widget_ops"), "higher");
	cr_expect_str_eq(direction_of_row(rows, "dx.score"), "lower");
	cr_expect_str_eq(direction_of_row(rows, "dx.plain"), "none");
	json_decref(j);
	/* kperfd keeps the metrics it has read (names and directions never
	 * change): one made since is read, and named, in the next compare */
	for (int k = 0; k < 2; k++) {
		char body[512];
		snprintf(body, sizeof(body),
			 "{\"run_id\":\"dir-fresh-%d\",\"machine\":{\"name\":\"dir-box\"},"
			 "\"kernel\":{\"commit\":\"%s\"},\"test\":{\"suite\":\"dirs\"},"
			 "\"metrics\":{\"dx.fresh_time\":[%d]}}",
			 k, k ? D_NEW : D_BASE, 50 + k);
		post(body);
	}
	j = compare("base=" D_BASE "&target=" D_NEW, 200);
	rows = json_object_get(j, "rows");
	cr_expect_eq(json_array_size(rows), 5, "%s", json_dumps(rows, 0));
	cr_expect_str_eq(direction_of_row(rows, "dx.fresh_time"), "lower");
	cr_expect_str_eq(direction_of_row(rows, "dx.score"), "lower");
	json_decref(j);
}

#define P_BASE "ddddddddddddddddddddddddddddddddddddddf0"
#define P_T1 "ddddddddddddddddddddddddddddddddddddddf1"
#define P_T2 "ddddddddddddddddddddddddddddddddddddddf2"
#define P_METRICS 1200 /* past the 1,000 keys from which two threads write the rows */

/* Two runs of commit sha, metric m's iterations m + add + {k, k+1, k+2} in
 * run k: the commit's mean of m is m + add + 1.5. */
static void post_many_metrics(const char *sha, int add)
{
	size_t cap = 256 + 48 * P_METRICS;
	char *body = malloc(cap);

	cr_assert_not_null(body);
	for (int k = 0; k < 2; k++) {
		size_t n = (size_t)snprintf(
			body, cap,
			"{\"run_id\":\"many-%s-%d\",\"machine\":{\"name\":\"many-box\"},"
			"\"kernel\":{\"commit\":\"%s\"},\"test\":{\"suite\":\"many\"},\"metrics\":{",
			sha, k, sha);
		for (int m = 0; m < P_METRICS; m++)
			n += (size_t)snprintf(body + n, cap - n, "%s\"pm.m%04d\":[%d,%d,%d]",
					      m ? "," : "", m, m + add + k, m + add + k + 1,
					      m + add + k + 2);
		snprintf(body + n, cap - n, "}}");
		post(body);
	}
	free(body);
}

/* Compares whose targets were read on the helper's connection / the request's. */
static long reads_on(const char *on)
{
	char name[80];

	snprintf(name, sizeof(name), "kperf_compare_target_reads_total{on=\"%s\"}", on);
	return harness_metric(&K, name);
}

/*
 * A compare of two targets over 1,200 metrics: the targets are read by a
 * helper thread on a second connection and merged, and the rows written by
 * two threads. Every row is where it belongs with its exact means. With no
 * connection to spare (one HTTP thread: a pool of four, two of them the
 * workers' and one the mailer's) the targets are read after the base on the
 * request's connection, and the answer is the same to the byte. kperfd's
 * own counters say which way each compare read its targets, whatever else
 * holds a connection at that moment.
 */
Test(compare, many_metrics_read_in_parallel_or_not_alike)
{
	char smtp[64];
	const char *one_thread[] = {"KPERF_THREADS=1", "KPERF_READ_CACHE_BYTES=0", smtp, NULL};
	const char *q = "base=" P_BASE "&target=" P_T1 "&target=" P_T2;
	char *parallel, *plain;
	json_t *j, *rows;
	json_error_t err;

	post_many_metrics(P_BASE, 0);
	post_many_metrics(P_T1, 100);
	post_many_metrics(P_T2, 200);
	/* mail off, two HTTP threads: two connections are always to spare */
	cr_assert_eq(reads_on("helper"), 0);
	parallel = compare_body(q, 0);
	cr_assert_eq(reads_on("helper"), 1, "the helper read the targets on a connection of its own");
	cr_assert_eq(reads_on("request"), 0);
	j = json_loads(parallel, 0, &err);
	cr_assert_not_null(j, "%s", err.text);
	rows = json_object_get(j, "rows");
	cr_assert_eq(json_array_size(rows), 2 * P_METRICS);
	for (int m = 0; m < P_METRICS; m++)
		for (int t = 0; t < 2; t++) {
			json_t *row = json_array_get(rows, (size_t)(2 * m + t));
			char name[16];
			snprintf(name, sizeof(name), "pm.m%04d", m);
			cr_assert_str_eq(json_string_value(json_object_get(row, "metric")), name);
			cr_assert_str_eq(json_string_value(json_object_get(row, "target_ref")),
					 t ? P_T2 : P_T1);
			cr_assert_eq(json_number_value(json_object_get(json_object_get(row, "base"),
								       "mean")),
				     m + 1.5);
			cr_assert_eq(json_integer_value(
					     json_object_get(json_object_get(row, "target"), "n")),
				     6);
			cr_assert_eq(json_number_value(json_object_get(json_object_get(row, "target"),
								       "mean")),
				     m + 1.5 + 100 * (t + 1), "%s target %d", name, t + 1);
			cr_assert_eq(json_number_value(json_object_get(row, "change_abs")),
				     100 * (t + 1));
		}
	json_decref(j);

	kperfd_kill(&K);
	/* mail on (to no server: nothing is sent) keeps the mailer's connection;
	 * no read cache, so that every compare reads the database */
	snprintf(smtp, sizeof(smtp), "KPERF_SMTP_URL=smtp://127.0.0.1:%d", harness_closed_port());
	kperfd_env(one_thread);
	kperfd_restart(&K);
	kperfd_env(NULL);
	/* until the mailer and the workers hold theirs, a helper may still find
	 * two to spare: every answer is the same, and one of them read inline */
	for (int i = 0; i < 400 && reads_on("request") == 0; i++) {
		plain = compare_body(q, 0);
		cr_assert(strcmp(parallel, plain) == 0, "the answers differ (%ld read inline)",
			  reads_on("request"));
		free(plain);
		if (reads_on("request") == 0)
			usleep(50000);
	}
	cr_assert_geq(reads_on("request"), 1, "no compare read its targets on the request's connection");
	free(parallel);
}

/*
 * A VM lab's runs against a bare-metal lab's (kperf-collect agent --vm): the
 * guest's shape is a variant knob and the kernels' built configs go with
 * the runs, so the compare says both differ besides the kernel, and a
 * verdict is given only between runs of the same variant.
 */
Test(compare, a_vm_run_against_bare_metal_shows_the_guest_and_the_config)
{
	static const double tput[2][3] = {{100, 101, 99}, {60, 61, 59}};
	json_t *j, *d, *row;
	size_t i;
	int saw_vm = 0, saw_config = 0;

	for (int k = 0; k < 2; k++)
		for (int i2 = 0; i2 < 3; i2++) {
			char body[2048];
			snprintf(body, sizeof(body),
				 "{\"run_id\":\"vm-%d-%d\",\"machine\":{\"name\":\"lab1\"},"
				 "\"kernel\":{\"commit\":\"%s\",\"config\":{\"CONFIG_HZ\":\"%s\"}},"
				 "\"variant\":%s,"
				 "\"test\":{\"suite\":\"readtwice\",\"params\":{\"procs\":\"1\"}},"
				 "\"metrics\":{\"readtwice.throughput\":[%g]}}",
				 k, i2, k ? C_NEW : C_BASE, k ? "1000" : "250",
				 k ? "{\"vm\":\"tcg-icount-1cpu-512M\"}" : "{}", tput[k][i2]);
			post(body);
		}
	j = compare("base=" C_BASE "&target=" C_NEW, 200);
	d = json_object_get(j, "environment_diff");
	json_array_foreach(d, i, row) {
		const char *kind = json_string_value(json_object_get(row, "kind"));
		const char *key = json_string_value(json_object_get(row, "key"));
		if (!strcmp(kind, "variant") && !strcmp(key, "vm")) {
			saw_vm = 1;
			cr_expect_eq(json_array_size(json_object_get(row, "base")), 0);
			cr_expect_str_eq(json_string_value(json_array_get(json_object_get(row, "target"), 0)),
					 "tcg-icount-1cpu-512M");
		}
		if (!strcmp(kind, "config") && !strcmp(key, "CONFIG_HZ")) {
			saw_config = 1;
			cr_expect_str_eq(json_string_value(json_array_get(json_object_get(row, "base"), 0)),
					 "250");
			cr_expect_str_eq(
			    json_string_value(json_array_get(json_object_get(row, "target"), 0)), "1000");
		}
	}
	cr_expect(saw_vm && saw_config, "%s", json_dumps(d, 0));
	/* the two sides share no variant: no row sets the guest against bare metal */
	cr_expect_eq(json_array_size(json_object_get(j, "rows")), 0, "%s",
		     json_dumps(json_object_get(j, "rows"), 0));
	json_decref(j);
	/* the decision workers keep the two apart too: nothing decided across them */
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM decision d JOIN variant v ON"
				       " v.id = d.variant_id WHERE d.verdict IN ('regression',"
				       " 'improvement') AND d.metric_id IN (SELECT id FROM metric"
				       " WHERE name = 'readtwice.throughput')"),
		     0);
}
