/*
 * test_ingest.c - POST /api/v1/runs end to end against a real kperfd and
 * PostgreSQL: the contract's example, the MGLRU raw data, idempotency,
 * conflicts, all-or-nothing batches, authentication and body limits.
 */
#include <criterion/criterion.h>
#include <curl/curl.h>
#include <endian.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/harness.h"

KPERFD_SUITE(ingest, 120);

/* The stored run must equal the posted one, compared as parsed JSON. */
static void assert_round_trip(const char *run_id, json_t *posted)
{
	char path[256];
	struct resp r;
	json_t *got;

	snprintf(path, sizeof(path), "/api/v1/runs/%s", run_id);
	http_get(&K, path, &r);
	cr_assert_eq(r.status, 200, "%s: %ld %s", path, r.status, r.body);
	got = resp_json(&r);
	cr_assert(json_equal(got, posted), "%s differs:\n%s", run_id, r.body);
	json_decref(got);
	resp_release(&r);
}

Test(ingest, contract_example_round_trip_and_idempotency)
{
	size_t len;
	char *body = harness_slurp("tests/fixtures/contract-example.json", &len);
	json_t *posted = json_loadb(body, len, JSON_DECODE_INT_AS_REAL, NULL);
	struct resp r;
	json_t *j;
	double id;

	http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, body, &r);
	cr_assert_eq(r.status, 201, "%ld %s", r.status, r.body);
	j = resp_json(&r);
	cr_expect_str_eq(json_string_value(json_object_get(j, "run_id")), "lab1-2020-06-16-0042");
	id = json_number_value(json_object_get(j, "id"));
	cr_expect_gt(id, 0);
	json_decref(j);
	resp_release(&r);
	assert_round_trip("lab1-2020-06-16-0042", posted);

	/* the same content, re-spelled: 200 with the same id, nothing duplicated */
	{
		char *respelled = NULL;
		json_t *again = json_loadb(body, len, 0, NULL);
		json_object_set_new(json_object_get(again, "machine"), "nr_cpus", json_real(160.0));
		respelled = json_dumps(again, JSON_SORT_KEYS | JSON_INDENT(3));
		http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, respelled, &r);
		cr_assert_eq(r.status, 200, "%ld %s", r.status, r.body);
		j = resp_json(&r);
		cr_expect_eq(json_number_value(json_object_get(j, "id")), id);
		json_decref(j);
		resp_release(&r);
		free(respelled);
		json_decref(again);
	}
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), 1);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM sample"), 4);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM commits"), 1);

	/* same run_id, other content: 409 naming run_id, stored run unchanged, and
	 * nothing of the re-post committed: not its machine's new info, not its
	 * commit's other subject (the run's statement goes with its COMMIT) */
	{
		char *other = strdup(body), *p = strstr(other, "20699112");
		json_t *o;
		p[7] = '3';
		o = json_loads(other, 0, NULL);
		free(other);
		cr_assert_not_null(o);
		json_object_set_new(json_object_get(o, "machine"), "info",
				    json_pack("{s:s}", "rack", "r9"));
		json_object_set_new(json_object_get(o, "kernel"), "subject", json_string("mm: BASE"));
		other = json_dumps(o, 0);
		json_decref(o);
		http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, other, &r);
		cr_expect_eq(r.status, 409, "%ld %s", r.status, r.body);
		j = resp_json(&r);
		cr_expect_str_eq(json_string_value(json_object_get(j, "error")), "conflict");
		cr_expect_str_eq(json_string_value(json_object_get(j, "field")), "run_id");
		json_decref(j);
		resp_release(&r);
		free(other);
	}
	assert_round_trip("lab1-2020-06-16-0042", posted);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM sample WHERE value = 20699112"), 1);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM machine WHERE info ? 'rack'"), 0);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM commits WHERE subject LIKE 'mm: BASE%'"),
		     0);
	json_decref(posted);
	free(body);
}

/* Twelve runs of the MGLRU seed's raw data, ten samples each. */
static json_t *mglru_batch(double *sum)
{
	/* a copy of ../shared/fixtures/mglru-ycsb.json: CI has only the repository */
	json_t *fx = json_load_file("tests/fixtures/mglru-ycsb.json", JSON_DECODE_INT_AS_REAL,
				    NULL);
	json_t *runs = json_array(), *samples;
	const char *kernel, *mem, *dist;
	json_t *bymem, *bydist, *vals;

	cr_assert_not_null(fx, "mglru-ycsb.json fixture");
	samples = json_object_get(fx, "samples");
	*sum = 0;
	json_object_foreach(samples, kernel, bymem) {
		const char *release = json_string_value(json_object_get(
			json_object_get(json_object_get(fx, "kernels"), kernel), "release"));
		json_object_foreach(bymem, mem, bydist) {
			const char *gb = json_string_value(json_object_get(
				json_object_get(json_object_get(fx, "params"), mem), "cacheSizeGB"));
			json_object_foreach(bydist, dist, vals) {
				char run_id[128];
				size_t i;
				json_t *v;
				snprintf(run_id, sizeof(run_id), "mglru-%s-%s-%s", kernel, mem, dist);
				json_array_foreach(vals, i, v)
					*sum += json_number_value(v);
				json_array_append_new(
					runs,
					json_pack("{s:s, s:{s:s}, s:{s:s}, s:{s:s, s:{s:s, s:s, s:s}},"
						  " s:{s:O}}",
						  "run_id", run_id, "machine", "name", "mongo-box",
						  "kernel", "release", release, "test", "suite", "ycsb",
						  "params", "workload", "mongodb", "cacheSizeGB", gb,
						  "distribution", dist, "metrics",
						  "ycsb.total_throughput_ops/s", vals));
			}
		}
	}
	json_decref(fx);
	return runs;
}

Test(ingest, mglru_fixture_batch_reads_back_identical)
{
	double sum;
	json_t *runs = mglru_batch(&sum), *batch, *run, *j;
	struct resp r;
	char *body;
	size_t i;

	cr_assert_eq(json_array_size(runs), 12);
	batch = json_pack("{s:O}", "runs", runs);
	body = json_dumps(batch, 0);
	http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, body, &r);
	cr_assert_eq(r.status, 201, "%ld %s", r.status, r.body);
	j = resp_json(&r);
	cr_expect_eq(json_array_size(json_object_get(j, "runs")), 12);
	json_decref(j);
	resp_release(&r);

	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM sample"), 120);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM commits"), 2);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM test"), 6);
	{
		/* every value stored exactly: the sum in SQL equals the sum here */
		PGconn *c = harness_db(&K);
		PGresult *res = PQexec(c, "SELECT sum(value)::text FROM sample");
		cr_expect_float_eq(strtod(PQgetvalue(res, 0, 0), NULL), sum, 1e-6);
		PQclear(res);
		PQfinish(c);
	}
	json_array_foreach(runs, i, run)
		assert_round_trip(json_string_value(json_object_get(run, "run_id")), run);

	/* the whole batch again: 200, nothing new */
	http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, body, &r);
	cr_expect_eq(r.status, 200, "%ld %s", r.status, r.body);
	resp_release(&r);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), 12);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM sample"), 120);
	free(body);
	json_decref(batch);
	json_decref(runs);
}

#define SMALL_RUN(id, extra)                                                                 \
	"{\"run_id\":\"" id "\",\"machine\":{\"name\":\"m1\"},\"kernel\":{\"release\":\"6.1\"}," \
	"\"test\":{\"suite\":\"s\"}," extra "\"metrics\":{\"s.throughput\":[1,2]}}"

Test(ingest, batch_is_all_or_nothing)
{
	struct resp r;
	json_t *j;

	http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR,
		       "{\"runs\":[" SMALL_RUN("b1", "") "," SMALL_RUN("b2", "") ","
		       "{\"run_id\":\"b3\",\"machine\":{\"name\":\"m1\"},\"kernel\":{\"release\":\"6.1\"},"
		       "\"test\":{\"suite\":\"s\"},\"metrics\":{\"s.x\":[1,2,3,\"x\"]}}]}",
		       &r);
	cr_assert_eq(r.status, 400, "%ld %s", r.status, r.body);
	j = resp_json(&r);
	cr_expect_str_eq(json_string_value(json_object_get(j, "error")), "invalid");
	cr_expect_str_eq(json_string_value(json_object_get(j, "field")), "runs[2].metrics.s.x[3]");
	json_decref(j);
	resp_release(&r);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), 0);

	/* a conflict in the last run rolls back the runs before it */
	http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, SMALL_RUN("c3", ""), &r);
	cr_assert_eq(r.status, 201, "%ld %s", r.status, r.body);
	resp_release(&r);
	http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR,
		       "{\"runs\":[" SMALL_RUN("c1", "") "," SMALL_RUN("c2", "") ","
		       SMALL_RUN("c3", "\"command\":\"other\",") "]}",
		       &r);
	cr_assert_eq(r.status, 409, "%ld %s", r.status, r.body);
	j = resp_json(&r);
	cr_expect_str_eq(json_string_value(json_object_get(j, "field")), "runs[2].run_id");
	json_decref(j);
	resp_release(&r);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), 1);
	http_get(&K, "/api/v1/runs/c1", &r);
	cr_expect_eq(r.status, 404);
	resp_release(&r);

	/* a batch with one new run and one repeat is 201 */
	http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR,
		       "{\"runs\":[" SMALL_RUN("c3", "") "," SMALL_RUN("c4", "") "]}", &r);
	cr_expect_eq(r.status, 201, "%ld %s", r.status, r.body);
	resp_release(&r);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), 2);
}

/* A COMMIT that fails after every statement before it worked (here a deferred
 * constraint trigger; in production a backend cut off by a shutdown between
 * the INSERT and the COMMIT) is never acknowledged, alone or in a batch. */
Test(ingest, a_run_whose_commit_fails_is_not_acknowledged)
{
	static const char *const bodies[] = {
		SMALL_RUN("late-1", ""), /* BEGIN, INSERT with samples, COMMIT sent together */
		"{\"runs\":[" SMALL_RUN("late-2", "") "," SMALL_RUN("ok-2", "") "]}", /* queue, COMMIT */
	};
	PGconn *c = harness_db(&K);
	struct resp r;

	/* s.throughput known: the runs after it go by the statements sent together */
	http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, SMALL_RUN("ok-1", ""), &r);
	cr_assert_eq(r.status, 201, "%ld %s", r.status, r.body);
	resp_release(&r);
	PQclear(PQexec(c, "CREATE FUNCTION refuse_late() RETURNS trigger LANGUAGE plpgsql AS"
			  " $$BEGIN IF NEW.run_id LIKE 'late-%' THEN"
			  " RAISE EXCEPTION 'refused at COMMIT'; END IF; RETURN NULL; END$$"));
	PQclear(PQexec(c, "CREATE CONSTRAINT TRIGGER refuse_late AFTER INSERT ON run"
			  " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_late()"));
	cr_assert_eq(harness_count(&K, "SELECT count(*) FROM pg_trigger WHERE tgname = 'refuse_late'"),
		     1);
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, bodies[i], &r);
		cr_expect(r.status >= 500, "body %zu: %ld %s", i, r.status, r.body);
		cr_expect(r.body && strstr(r.body, "\"error\""), "body %zu: %s", i, r.body);
		resp_release(&r);
	}
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), 1);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM sample"), 2);
	/* the same runs once the trigger is gone: stored, and acknowledged */
	PQclear(PQexec(c, "DROP TRIGGER refuse_late ON run"));
	for (size_t i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, bodies[i], &r);
		cr_expect_eq(r.status, 201, "body %zu: %ld %s", i, r.status, r.body);
		resp_release(&r);
	}
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), 4);
	PQfinish(c);
}

Test(ingest, unknown_keys_are_listed)
{
	struct resp r;
	json_t *j, *ign;

	http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR,
		       SMALL_RUN("u1", "\"colour\":\"blue\",\"test2\":{},"), &r);
	cr_assert_eq(r.status, 201, "%ld %s", r.status, r.body);
	j = resp_json(&r);
	ign = json_object_get(j, "ignored");
	cr_expect_eq(json_array_size(ign), 2);
	cr_expect_str_eq(json_string_value(json_array_get(ign, 0)), "colour");
	json_decref(j);
	resp_release(&r);
	http_get(&K, "/api/v1/runs/u1", &r);
	cr_expect_null(strstr(r.body, "colour"));
	resp_release(&r);
}

Test(ingest, bad_requests_say_why)
{
	struct resp r;
	json_t *j;
	static const char nan_body[] = "{\n\"run_id\": \"n1\",\n\"metrics\": {\"a\": [NaN]}}";

	http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, nan_body, &r);
	cr_assert_eq(r.status, 400);
	j = resp_json(&r);
	cr_expect_str_eq(json_string_value(json_object_get(j, "error")), "malformed");
	cr_expect(json_is_null(json_object_get(j, "field")));
	cr_expect(strstr(json_string_value(json_object_get(j, "message")), "line 3") != NULL,
		  "%s", r.body);
	json_decref(j);
	resp_release(&r);

	http_call(&K, "POST", "/api/v1/runs", TOKEN_COLLECTOR, "text/plain", "{}", 2, &r);
	cr_expect_eq(r.status, 415, "%ld %s", r.status, r.body);
	j = resp_json(&r);
	cr_expect_str_eq(json_string_value(json_object_get(j, "error")), "unsupported_media_type");
	json_decref(j);
	resp_release(&r);

	http_call(&K, "GET", "/api/v1/nothing", NULL, NULL, NULL, 0, &r);
	cr_expect_eq(r.status, 404);
	resp_release(&r);
	http_call(&K, "DELETE", "/api/v1/runs", NULL, NULL, NULL, 0, &r);
	cr_expect_eq(r.status, 405);
	resp_release(&r);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), 0);
}

Test(ingest, authentication)
{
	struct resp r;
	json_t *j;
	char *out, *err, *token;
	const char *create[] = {"token", "create", "lab7", NULL};
	const char *revoke[] = {"token", "revoke", "lab7", NULL};
	const char *list[] = {"token", "list", NULL};

	http_post_json(&K, "/api/v1/runs", NULL, SMALL_RUN("a1", ""), &r);
	cr_expect_eq(r.status, 401);
	j = resp_json(&r);
	cr_expect_str_eq(json_string_value(json_object_get(j, "error")), "unauthorized");
	json_decref(j);
	resp_release(&r);
	http_post_json(&K, "/api/v1/runs", "wrong_token_wrong_token_1", SMALL_RUN("a1", ""), &r);
	cr_expect_eq(r.status, 403);
	j = resp_json(&r);
	cr_expect_str_eq(json_string_value(json_object_get(j, "error")), "forbidden");
	json_decref(j);
	resp_release(&r);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), 0);

	/* a token from the CLI works until it is revoked; only its hash is stored */
	cr_assert_eq(kperfd_cli(&K, create, &out, &err), 0, "%s", err);
	token = strtok(out, "\n");
	cr_assert_not_null(token);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM api_token WHERE name = 'lab7'"
				       " AND hash = sha256(convert_to(name, 'UTF8')) IS FALSE"),
		     1);
	http_post_json(&K, "/api/v1/runs", token, SMALL_RUN("a2", ""), &r);
	cr_expect_eq(r.status, 201, "%ld %s", r.status, r.body);
	resp_release(&r);
	free(err);
	{
		char *o2, *e2;
		cr_assert_eq(kperfd_cli(&K, revoke, &o2, &e2), 0, "%s", e2);
		free(o2);
		free(e2);
	}
	http_post_json(&K, "/api/v1/runs", token, SMALL_RUN("a3", ""), &r);
	cr_expect_eq(r.status, 403);
	resp_release(&r);
	free(out);
	cr_assert_eq(kperfd_cli(&K, list, &out, &err), 0);
	cr_expect(strstr(out, "lab7") && strstr(out, "collector") && strstr(out, "bootstrap"),
		  "%s", out);
	cr_expect_null(strstr(out, TOKEN_COLLECTOR));
	free(out);
	free(err);
}

static size_t ignore_body(char *p, size_t size, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return size * n;
}

/* POST body on handle h (kept between calls); the status, and in *reused
 * whether the request went on the handle's open connection. */
static long post_on(CURL *h, const char *body, size_t len, int *reused)
{
	struct curl_slist *hdr = NULL;
	char url[256];
	long status = 0, connects = -1;
	CURLcode rc;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/api/v1/runs", K.port);
	hdr = curl_slist_append(hdr, "Expect:");
	hdr = curl_slist_append(hdr, "Content-Type: application/json");
	hdr = curl_slist_append(hdr, "Authorization: Bearer " TOKEN_COLLECTOR);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, ignore_body);
	rc = curl_easy_perform(h);
	cr_assert_eq(rc, CURLE_OK, "%s", curl_easy_strerror(rc));
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &connects);
	*reused = connects == 0;
	curl_slist_free_all(hdr);
	return status;
}

Test(ingest, body_limit)
{
	size_t n = 5u << 20;
	char *big = malloc(n + 1);
	struct resp r;
	json_t *j;

	/* 5 MiB of [0,0,...]: refused from Content-Length, none of it kept */
	big[0] = '[';
	for (size_t i = 1; i < n - 1; i += 2) {
		big[i] = '0';
		big[i + 1] = ',';
	}
	big[n - 2] = '0';
	big[n - 1] = ']';
	big[n] = '\0';
	http_call(&K, "POST", "/api/v1/runs", TOKEN_COLLECTOR, "application/json", big, n, &r);
	cr_expect_eq(r.status, 413, "%ld %s", r.status, r.body);
	j = resp_json(&r);
	cr_expect_str_eq(json_string_value(json_object_get(j, "error")), "too_large");
	json_decref(j);
	resp_release(&r);

	/* 1 MiB over: read and dropped before the 413 (LIMIT_DRAIN_BYTES), so
	 * the client reads its answer (an answer sent before the body was read
	 * closes the connection on unread bytes, a reset that can reach the client
	 * first) and the connection stays open for the next run */
	{
		CURL *h = curl_easy_init();
		int reused = -1;

		cr_expect_eq(post_on(h, big, n, &reused), 413);
		cr_expect_eq(post_on(h, SMALL_RUN("l0", ""), strlen(SMALL_RUN("l0", "")), &reused),
			     201);
		cr_expect(reused, "the connection was closed after the 413");
		curl_easy_cleanup(h);
	}

	/* chunked, no Content-Length: refused while reading, nothing stored */
	setenv("KPERF_TEST_CHUNKED", "1", 1);
	http_call(&K, "POST", "/api/v1/runs", TOKEN_COLLECTOR, "application/json", big, n, &r);
	unsetenv("KPERF_TEST_CHUNKED");
	cr_expect_eq(r.status, 413, "chunked: %ld %s", r.status, r.body);
	resp_release(&r);
	free(big);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), 1); /* l0 */

	/* a body just under the limit is read and judged on its content */
	http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, SMALL_RUN("l1", ""), &r);
	cr_expect_eq(r.status, 201);
	resp_release(&r);
}

Test(ingest, repeated_bad_tokens_are_slowed)
{
	struct resp r;
	int saw429 = 0;

	for (int i = 0; i < 25 && !saw429; i++) {
		http_post_json(&K, "/api/v1/runs", i % 2 ? NULL : "forged_forged_forged_0001",
			       SMALL_RUN("t1", ""), &r);
		cr_expect(r.status == 401 || r.status == 403 || r.status == 429, "%ld", r.status);
		if (r.status == 429) {
			saw429 = 1;
			cr_expect_str_eq(r.retry_after, "60");
			cr_expect_geq(i, 19, "blocked after %d failures", i);
		}
		resp_release(&r);
	}
	cr_expect(saw429, "no 429 after 25 bad tokens");
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), 0);
	/* reads stay open to the address */
	http_get(&K, "/healthz", &r);
	cr_expect_eq(r.status, 200);
	resp_release(&r);
}

/*
 * Values go to PostgreSQL as COPY text in their shortest exact form: every
 * one reads back as the same double, bit for bit, the awkward ones too
 * (subnormals, the extremes, 0.1, integers past 2^53, a negative zero).
 */
Test(ingest, values_stored_bit_exact)
{
	static const char *const texts[] = {
		"0.1", "1e-300", "5e-324", "2.2250738585072014e-308", "-2.225073858507201e-308",
		"1.7976931348623157e308", "-0.3333333333333333", "123456789.12345679",
		"9007199254740993", "1e21", "1e22", "-0.0", "4.35", "1000.25", "0"};
	size_t n = sizeof(texts) / sizeof(texts[0]);
	char body[2048];
	size_t len;
	struct resp r;
	PGconn *c;
	PGresult *res;

	/* twice: the first run's new metric goes by COPY, the second (its id
	 * known) by the one-statement way of a single run (store.c) */
	for (int run = 1; run <= 2; run++) {
		len = (size_t)snprintf(body, sizeof(body),
				       "{\"run_id\":\"exact-%d\",\"machine\":{\"name\":\"m1\"},"
				       "\"kernel\":{\"release\":\"6.1\"},\"test\":{\"suite\":\"s\"},"
				       "\"metrics\":{\"s.exact\":[",
				       run);
		for (size_t i = 0; i < n; i++)
			len += (size_t)snprintf(body + len, sizeof(body) - len, "%s%s", i ? "," : "",
						texts[i]);
		snprintf(body + len, sizeof(body) - len, "]}}");
		http_post_json(&K, "/api/v1/runs", TOKEN_COLLECTOR, body, &r);
		cr_assert_eq(r.status, 201, "%ld %s", r.status, r.body);
		resp_release(&r);
	}

	c = harness_db(&K);
	res = PQexecParams(c, "SELECT value FROM sample ORDER BY run_id, iteration", 0, NULL, NULL,
			   NULL, NULL, 1);
	cr_assert_eq(PQntuples(res), 2 * (int)n, "%s", PQresultErrorMessage(res));
	for (size_t i = 0; i < 2 * n; i++) {
		double want = strtod(texts[i % n], NULL), got;
		uint64_t bits, wbits;
		memcpy(&bits, PQgetvalue(res, (int)i, 0), sizeof(bits));
		bits = be64toh(bits);
		memcpy(&got, &bits, sizeof(got));
		memcpy(&wbits, &want, sizeof(wbits));
		cr_expect_eq(bits, wbits, "run %zu: %s stored as %.17g", i / n + 1, texts[i % n], got);
	}
	PQclear(res);
	PQfinish(c);
}
