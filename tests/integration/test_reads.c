/*
 * test_reads.c - what is stored, read back: lists and their parameters,
 * commits described ahead of results, health, Prometheus counters, the
 * static files (and traversal attempts), request logs and migrations.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/harness.h"

KPERFD_SUITE(reads, 120);

/* Until the decision queue is empty, at most 60 s: the worker's passes are
 * over (an entry leaves the queue only once its pass has committed). */
static void queue_drained(void)
{
	double end = harness_now() + 60;

	while (harness_count(&K, "SELECT count(*) FROM decision_queue") > 0) {
		cr_assert_lt(harness_now(), end, "the decision queue is not empty after 60 s");
		usleep(50000);
	}
}

static void post(const char *path, const char *body, long want)
{
	struct resp r;
	http_post_json(&K, path, TOKEN_COLLECTOR, body, &r);
	cr_assert_eq(r.status, want, "%s: %ld %s", path, r.status, r.body);
	resp_release(&r);
}

#define SHA1 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1"
#define SHA2 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2"
#define SHA3 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa3"

static void seed(void)
{
	size_t len;
	char *example = harness_slurp("tests/fixtures/contract-example.json", &len);

	post("/api/v1/runs", example, 201);
	free(example);
	post("/api/v1/commits",
	     "[{\"sha\":\"" SHA1 "\",\"subject\":\"mm: base\",\"date\":\"2020-08-20T00:00:00Z\"},"
	     "{\"sha\":\"" SHA2 "\",\"parent\":\"" SHA1 "\",\"subject\":\"mm/lru: one\","
	     "\"series\":\"per-memcg-lru_lock v18\",\"files\":[\"mm/swap.c\"],"
	     "\"date\":\"2020-08-21T00:00:00Z\"},"
	     "{\"sha\":\"" SHA3 "\",\"parent\":\"" SHA2 "\",\"subject\":\"mm/lru: two\","
	     "\"series\":\"per-memcg-lru_lock v18\",\"files\":[\"mm/vmscan.c\"],"
	     "\"date\":\"2020-08-22T00:00:00Z\"}]",
	     201);
	for (int i = 0; i < 3; i++) {
		char body[512];
		snprintf(body, sizeof(body),
			 "{\"run_id\":\"rd-%d\",\"machine\":{\"name\":\"box%d\"},"
			 "\"kernel\":{\"commit\":\"%s\"},\"test\":{\"suite\":\"readtwice\"},"
			 "\"started_at\":\"2020-08-2%dT12:00:00Z\","
			 "\"metrics\":{\"readtwice.throughput\":[%d]}}",
			 i, i % 2, i == 2 ? SHA3 : SHA2, 3 + i, 100 + i);
		post("/api/v1/runs", body, 201);
	}
}

Test(reads, lists_and_filters)
{
	json_t *j, *it;

	seed();
	j = harness_get_json(&K, "/api/v1/runs", 200);
	cr_expect_eq(json_number_value(json_object_get(j, "total")), 4);
	cr_expect_eq(json_number_value(json_object_get(j, "limit")), 100);
	cr_expect_eq(json_number_value(json_object_get(j, "offset")), 0);
	/* newest first */
	it = json_array_get(json_object_get(j, "items"), 0);
	cr_expect_str_eq(json_string_value(json_object_get(it, "run_id")), "rd-2");
	json_decref(j);

	j = harness_get_json(&K, "/api/v1/runs?machine=box0&suite=readtwice", 200);
	cr_expect_eq(json_number_value(json_object_get(j, "total")), 2);
	json_decref(j);
	j = harness_get_json(&K, "/api/v1/runs?commit=1431d4d11abb", 200);
	cr_expect_eq(json_number_value(json_object_get(j, "total")), 1);
	json_decref(j);
	j = harness_get_json(&K, "/api/v1/runs?commit=5.8.0-rc1-00123-g1431d4d11abb", 200);
	cr_expect_eq(json_number_value(json_object_get(j, "total")), 1);
	json_decref(j);
	j = harness_get_json(&K, "/api/v1/runs?limit=1&offset=1", 200);
	cr_expect_eq(json_number_value(json_object_get(j, "total")), 4);
	cr_expect_eq(json_array_size(json_object_get(j, "items")), 1);
	it = json_array_get(json_object_get(j, "items"), 0);
	cr_expect_str_eq(json_string_value(json_object_get(it, "run_id")), "rd-1");
	json_decref(j);

	j = harness_get_json(&K, "/api/v1/machines", 200);
	cr_expect_eq(json_number_value(json_object_get(j, "total")), 3);
	it = json_array_get(json_object_get(j, "items"), 2);
	cr_expect_str_eq(json_string_value(json_object_get(it, "name")), "lkp-bdw-ex2");
	cr_expect_eq(json_number_value(json_object_get(it, "nr_cpus")), 160);
	cr_expect_eq(json_number_value(json_object_get(it, "runs")), 1);
	json_decref(j);

	j = harness_get_json(&K, "/api/v1/tests", 200);
	cr_expect_eq(json_number_value(json_object_get(j, "total")), 2);
	json_decref(j);
	j = harness_get_json(&K, "/api/v1/metrics?metric=vm-scalability.*", 200);
	cr_expect_eq(json_number_value(json_object_get(j, "total")), 1);
	it = json_array_get(json_object_get(j, "items"), 0);
	cr_expect_str_eq(json_string_value(json_object_get(it, "unit")), "KB/s");
	json_decref(j);
	j = harness_get_json(&K, "/api/v1/metrics?metric=*_lock_*", 200);
	cr_expect_eq(json_number_value(json_object_get(j, "total")), 1);
	json_decref(j);
}

Test(reads, commits_with_parents_and_series)
{
	json_t *j, *it;

	seed();
	j = harness_get_json(&K, "/api/v1/commits?series=per-memcg-lru_lock", 200);
	cr_expect_eq(json_number_value(json_object_get(j, "total")), 2);
	it = json_array_get(json_object_get(j, "items"), 0);
	cr_expect_str_eq(json_string_value(json_object_get(it, "sha")), SHA3);
	cr_expect_str_eq(json_string_value(json_object_get(it, "parent")), SHA2);
	cr_expect_str_eq(json_string_value(json_object_get(it, "series_name")), "per-memcg-lru_lock");
	cr_expect_eq(json_number_value(json_object_get(it, "series_version")), 18);
	cr_expect_str_eq(json_string_value(json_array_get(json_object_get(it, "files"), 0)),
			 "mm/vmscan.c");
	cr_expect_eq(json_number_value(json_object_get(it, "runs")), 1);
	json_decref(j);
	/* a run's kernel block is a commit description too */
	j = harness_get_json(&K, "/api/v1/commits", 200);
	cr_expect_eq(json_number_value(json_object_get(j, "total")), 4);
	json_decref(j);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM commits WHERE sha = "
				       "'1431d4d11abb265e79cd44bed2f5ea93f1bcc57b' AND parent_sha = "
				       "'a4fe1631f313f75c9d8f4b5e0e9cba1c1bd1d68e' AND series_version = 1"),
		     1);
	/* describing a commit again fills in, never erases */
	post("/api/v1/commits", "{\"commits\":[{\"sha\":\"" SHA1 "\",\"branch\":\"mm-unstable\"}]}",
	     201);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM commits WHERE sha = '" SHA1
				       "' AND subject = 'mm: base' AND branch = 'mm-unstable'"),
		     1);
}

Test(reads, list_parameters_are_checked)
{
	static const char *const bad[][2] = {
		{"/api/v1/runs?limit=0", "limit"},	  {"/api/v1/runs?limit=1001", "limit"},
		{"/api/v1/runs?limit=abc", "limit"},	  {"/api/v1/runs?limit=1.5", "limit"},
		{"/api/v1/machines?offset=-1", "offset"}, {"/api/v1/commits?offset=x", "offset"},
		{"/api/v1/metrics?limit=", "limit"},	  {"/api/v1/tests?limit=+5", "limit"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *j = harness_get_json(&K, bad[i][0], 400);
		cr_expect_str_eq(json_string_value(json_object_get(j, "field")), bad[i][1], "%s",
				 bad[i][0]);
		cr_expect_str_eq(json_string_value(json_object_get(j, "error")), "invalid");
		json_decref(j);
	}
	json_decref(harness_get_json(&K, "/api/v1/runs?limit=1000&offset=5", 200));
}

Test(reads, health_metrics_and_log)
{
	struct resp r;
	json_t *j;
	char *log;

	seed();
	j = harness_get_json(&K, "/healthz", 200);
	cr_expect_str_eq(json_string_value(json_object_get(j, "status")), "ok");
	json_decref(j);
	http_get(&K, "/metrics", &r);
	cr_expect_eq(r.status, 200);
	cr_expect(strstr(r.body, "kperf_runs_created_total 4\n") != NULL, "%s", r.body);
	cr_expect(strstr(r.body, "kperf_samples_created_total 7\n") != NULL, "%s", r.body);
	cr_expect(strstr(r.body, "kperf_route_requests_total{method=\"POST\",route=\"/api/v1/runs\","
				 "class=\"2xx\"} 4\n") != NULL,
		  "%s", r.body);
	cr_expect(strstr(r.body, "kperf_http_request_duration_seconds_bucket{le=\"+Inf\"}") != NULL);
	cr_expect(strstr(r.body, "kperf_queue_depth{queue=\"decisions\",state=\"queued\"}") != NULL,
		  "%s", r.body);
	resp_release(&r);
	http_get(&K, "/api/v1/runs/does-not-exist", &r);
	cr_expect_eq(r.status, 404);
	resp_release(&r);
	/* the line is written when the request completes, just after the answer */
	for (double end = harness_now() + 30;;) {
		log = harness_slurp(K.log, NULL);
		if (strstr(log, "GET /api/v1/runs/does-not-exist 404 "))
			break;
		free(log);
		log = NULL;
		if (harness_now() >= end)
			break;
		usleep(20000);
	}
	cr_assert_not_null(log, "no log line for the 404 within 30 s");
	cr_expect(strstr(log, "POST /api/v1/runs 201 ") != NULL);
	cr_expect(strstr(log, "GET /healthz 200 ") != NULL, "log:\n%s", log);
	free(log);
}

Test(reads, static_files_stay_inside)
{
	static const char *const outside[] = {
		"/static/../../etc/passwd",	    "/static/%2e%2e/%2e%2e/etc/passwd",
		"/static/..%2f..%2fetc%2fpasswd",   "/static/./index.html",
		"/static//etc/passwd",		    "/static/nonexistent.js",
	};
	struct resp r;

	http_get(&K, "/", &r);
	cr_expect_eq(r.status, 200);
	cr_expect(strstr(r.content_type, "text/html") != NULL, "%s", r.content_type);
	cr_expect(strstr(r.body, "kperf</title>") != NULL);
	resp_release(&r);
	http_get(&K, "/static/vendor/chart.umd.min.js", &r);
	cr_expect_eq(r.status, 200, "Chart.js must be served locally");
	cr_expect(strstr(r.body, "Chart") != NULL);
	resp_release(&r);
	/* ETag and 304, gzip when accepted, security headers */
	{
		char inm[128];
		http_get_with(&K, "/static/vendor/chart.umd.min.js", "Accept-Encoding: gzip", &r);
		cr_expect_eq(r.status, 200);
		cr_expect_str_eq(r.encoding, "gzip");
		cr_expect_lt(r.len, 150000, "gzip: %zu bytes", r.len);
		cr_expect(r.etag[0] == '"', "ETag %s", r.etag);
		cr_expect(r.has_csp);
		snprintf(inm, sizeof(inm), "If-None-Match: %s", r.etag);
		resp_release(&r);
		http_get_with(&K, "/static/vendor/chart.umd.min.js", inm, &r);
		cr_expect_eq(r.status, 304);
		cr_expect_eq(r.len, 0);
		resp_release(&r);
		http_get(&K, "/static/vendor/chart.umd.min.js", &r);
		cr_expect_str_eq(r.encoding, "", "no gzip unless accepted");
		cr_expect_gt(r.len, 150000);
		resp_release(&r);
		http_get(&K, "/?machine=x", &r);
		cr_expect_eq(r.status, 200);
		cr_expect(strstr(r.content_type, "text/html") != NULL);
		resp_release(&r);
	}
	for (size_t i = 0; i < sizeof(outside) / sizeof(outside[0]); i++) {
		http_get(&K, outside[i], &r);
		cr_expect(r.status == 404 || r.status == 400, "%s: %ld", outside[i], r.status);
		cr_expect_null(strstr(r.body, "root:"), "%s leaked a file", outside[i]);
		resp_release(&r);
	}
}

Test(reads, migrations_apply_once_and_refuse_newer_schemas)
{
	const char *migrate[] = {"migrate", NULL};
	char *out, *err;
	long versions = harness_count(&K, "SELECT count(*) FROM schema_migrations");

	cr_expect_geq(versions, 1);
	kperfd_kill(&K);
	kperfd_restart(&K);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM schema_migrations"), versions);
	cr_assert_eq(kperfd_cli(&K, migrate, &out, &err), 0, "%s", err);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM schema_migrations"), versions);
	free(out);
	free(err);

	{
		PGconn *c = harness_db(&K);
		PQclear(PQexec(c, "INSERT INTO schema_migrations (version, name) VALUES (999, 'future')"));
		PQfinish(c);
	}
	cr_assert_eq(kperfd_cli(&K, migrate, &out, &err), 1);
	cr_expect(strstr(err, "newer than this kperfd") != NULL, "%s", err);
	free(out);
	free(err);
}

#define TSHA1 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb1"
#define TSHA2 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb2"

static void post_trend_run(const char *run_id, const char *machine, const char *kernel,
			   const char *metrics)
{
	char body[512];
	snprintf(body, sizeof(body),
		 "{\"run_id\":\"%s\",\"machine\":{\"name\":\"%s\"},\"kernel\":{%s},"
		 "\"test\":{\"suite\":\"trendorder\"},\"metrics\":{%s}}",
		 run_id, machine, kernel, metrics);
	post("/api/v1/runs", body, 201);
}

static const char *point_str(json_t *p, const char *key)
{
	return json_string_value(json_object_get(p, key));
}

/* The points of a key group: commits in commit order (a child after its
 * parent whatever the dates, a kernel known by release only by its first
 * arrival), each commit's runs in arrival order with their iterations in
 * order; invalid runs, other machines and other metrics left out. */
Test(reads, a_trend_is_its_key_group_in_commit_order)
{
	struct resp r;
	json_t *j, *pts, *p;

	post("/api/v1/commits",
	     "[{\"sha\":\"" TSHA1 "\",\"subject\":\"mm: first\",\"date\":\"2020-09-03T10:20:30Z\"},"
	     "{\"sha\":\"" TSHA2 "\",\"parent\":\"" TSHA1 "\",\"subject\":\"mm: second\","
	     "\"date\":\"2020-09-01T00:00:59Z\"}]",
	     201);
	post_trend_run("to-a", "tbox", "\"commit\":\"" TSHA2 "\"",
		       "\"to.x\":[1,2.5],\"to.y\":[42]");
	post_trend_run("to-b", "tbox", "\"commit\":\"" TSHA1 "\"", "\"to.x\":[10]");
	post_trend_run("to-c", "tbox", "\"commit\":\"" TSHA2 "\"", "\"to.x\":[3]");
	post_trend_run("to-d", "tbox", "\"commit\":\"" TSHA1 "\"", "\"to.x\":[99]");
	post_trend_run("to-e", "tbox", "\"release\":\"5.9.0-trendorder\"", "\"to.x\":[7]");
	post_trend_run("to-f", "tbox2", "\"commit\":\"" TSHA1 "\"", "\"to.x\":[555]");
	http_call(&K, "DELETE", "/api/v1/runs/to-d", TOKEN_ADMIN, NULL, NULL, 0, &r);
	cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body);
	resp_release(&r);

	j = harness_get_json(&K, "/api/v1/trend?machine=tbox&suite=trendorder&metric=to.x", 200);
	pts = json_object_get(json_array_get(json_object_get(j, "series"), 0), "points");
	cr_assert_eq(json_array_size(pts), 3, "%s", json_dumps(pts, 0));
	p = json_array_get(pts, 0);
	cr_expect_str_eq(point_str(p, "commit"), TSHA1);
	cr_expect_str_eq(point_str(p, "subject"), "mm: first");
	cr_expect_str_eq(point_str(p, "date"), "2020-09-03T10:20:30Z");
	cr_expect_eq(json_array_size(json_object_get(p, "samples")), 1);
	cr_expect_eq(json_number_value(json_array_get(json_object_get(p, "samples"), 0)), 10);
	cr_expect_str_eq(json_string_value(json_array_get(json_object_get(p, "runs"), 0)), "to-b");
	cr_expect_eq(json_array_size(json_object_get(p, "runs")), 1);
	p = json_array_get(pts, 1);
	cr_expect_str_eq(point_str(p, "commit"), TSHA2);
	cr_expect_str_eq(point_str(p, "parent"), TSHA1);
	cr_expect_str_eq(point_str(p, "date"), "2020-09-01T00:00:59Z");
	cr_expect_eq(json_number_value(json_object_get(p, "n")), 3);
	cr_expect_eq(json_number_value(json_array_get(json_object_get(p, "samples"), 0)), 1);
	cr_expect_eq(json_number_value(json_array_get(json_object_get(p, "samples"), 1)), 2.5);
	cr_expect_eq(json_number_value(json_array_get(json_object_get(p, "samples"), 2)), 3);
	cr_expect_eq(json_number_value(json_object_get(p, "mean")), 6.5 / 3);
	cr_expect_eq(json_array_size(json_object_get(p, "runs")), 2);
	cr_expect_str_eq(json_string_value(json_array_get(json_object_get(p, "runs"), 0)), "to-a");
	cr_expect_str_eq(json_string_value(json_array_get(json_object_get(p, "runs"), 1)), "to-c");
	p = json_array_get(pts, 2);
	cr_expect(json_is_null(json_object_get(p, "commit")));
	cr_expect(json_is_null(json_object_get(p, "date")));
	cr_expect_str_eq(point_str(p, "release"), "5.9.0-trendorder");
	cr_expect_eq(json_number_value(json_array_get(json_object_get(p, "samples"), 0)), 7);
	json_decref(j);

	j = harness_get_json(&K, "/api/v1/trend?machine=tbox&suite=trendorder&metric=to.y", 200);
	pts = json_object_get(json_array_get(json_object_get(j, "series"), 0), "points");
	cr_assert_eq(json_array_size(pts), 1, "%s", json_dumps(pts, 0));
	cr_expect_eq(json_number_value(json_array_get(json_object_get(json_array_get(pts, 0),
								      "samples"),
						      0)),
		     42);
	json_decref(j);
}

#define TSHA3 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb3"
#define TSHA4 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb4"
#define TSHA5 "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb5"

static json_t *late_points(json_t **j)
{
	*j = harness_get_json(&K, "/api/v1/trend?machine=tlate&suite=trendorder&metric=tl.x", 200);
	return json_object_get(json_array_get(json_object_get(*j, "series"), 0), "points");
}

/* kperfd keeps the commits it has shown (commit_cache.c): a commit told more
 * later, through kperfd or straight in the database (another kperfd), shows
 * as it is now, in the order its new parent gives. */
Test(reads, a_trend_shows_its_commits_as_they_are_now)
{
	json_t *j, *pts;
	PGconn *c;

	post_trend_run("tl-a", "tlate", "\"commit\":\"" TSHA3 "\"", "\"tl.x\":[1]");
	post_trend_run("tl-b", "tlate", "\"commit\":\"" TSHA4 "\"", "\"tl.x\":[2]");
	pts = late_points(&j);
	cr_assert_eq(json_array_size(pts), 2, "%s", json_dumps(pts, 0));
	cr_expect_str_eq(point_str(json_array_get(pts, 0), "commit"), TSHA3);
	cr_expect(json_is_null(json_object_get(json_array_get(pts, 0), "subject")));
	cr_expect(json_is_null(json_object_get(json_array_get(pts, 0), "parent")));
	json_decref(j);

	post("/api/v1/commits",
	     "[{\"sha\":\"" TSHA3 "\",\"parent\":\"" TSHA4 "\",\"subject\":\"mm: late\","
	     "\"date\":\"2021-01-02T03:04:05Z\"}]",
	     201);
	pts = late_points(&j);
	cr_assert_eq(json_array_size(pts), 2, "%s", json_dumps(pts, 0));
	cr_expect_str_eq(point_str(json_array_get(pts, 0), "commit"), TSHA4);
	cr_expect_str_eq(point_str(json_array_get(pts, 1), "commit"), TSHA3);
	cr_expect_str_eq(point_str(json_array_get(pts, 1), "subject"), "mm: late");
	cr_expect_str_eq(point_str(json_array_get(pts, 1), "parent"), TSHA4);
	cr_expect_str_eq(point_str(json_array_get(pts, 1), "date"), "2021-01-02T03:04:05Z");
	json_decref(j);

	c = harness_db(&K);
	PQclear(PQexec(c, "UPDATE commits SET subject = 'mm: later', release = 'v5.11-rc1'"
			  " WHERE sha = '" TSHA3 "'"));
	PQfinish(c);
	pts = late_points(&j);
	cr_expect_str_eq(point_str(json_array_get(pts, 1), "subject"), "mm: later");
	cr_expect_str_eq(point_str(json_array_get(pts, 1), "release"), "v5.11-rc1");
	json_decref(j);

	/* a change point names its commits from the same cache, reading one no
	 * run of the trend has (TSHA5) by id; stored by hand once the worker's
	 * passes over the group are done (a pass replaces its change points) */
	post("/api/v1/commits", "[{\"sha\":\"" TSHA5 "\",\"subject\":\"mm: unrun\"}]", 201);
	queue_drained();
	c = harness_db(&K);
	PQclear(PQexec(c, "INSERT INTO change_point (machine_id, test_id, variant_id, metric_id,"
			  " commit_id, prev_commit_id, shift_pct, ci_lo_pct, ci_hi_pct, p_value)"
			  " SELECT r.machine_id, r.test_id, r.variant_id, m.id, r.commit_id,"
			  "  (SELECT id FROM commits WHERE sha = '" TSHA5 "'), -12.5, -14, -11, 0.002"
			  " FROM run r, metric m WHERE r.run_id = 'tl-a' AND m.name = 'tl.x'"));
	PQfinish(c);
	late_points(&j);
	{
		json_t *cp = json_array_get(
			json_object_get(json_array_get(json_object_get(j, "series"), 0), "change_points"),
			0);
		cr_assert_not_null(cp, "%s", json_dumps(j, 0));
		cr_expect_str_eq(json_string_value(json_object_get(cp, "commit")), TSHA3);
		cr_expect_str_eq(json_string_value(json_object_get(cp, "prev_commit")), TSHA5);
		cr_expect_eq(json_number_value(json_object_get(cp, "shift_pct")), -12.5);
	}
	json_decref(j);
}
