/*
 * test_decode.c - the ingest decoder on bad and good bodies: every bad input
 * must give the contract's error code and the exact field path.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ingest_decode.h"

/* A valid run with one spot to splice something into. */
#define RUN_HEAD "{\"run_id\":\"r1\",\"machine\":{\"name\":\"m1\"},\"kernel\":{\"release\":\"6.1.0\"},"
#define RUN_TEST "\"test\":{\"suite\":\"ycsb\"},"
#define RUN_METRICS "\"metrics\":{\"ycsb.throughput\":[1,2,3]}"
#define RUN(extra) RUN_HEAD RUN_TEST extra RUN_METRICS "}"

struct bad {
	const char *name;
	const char *body;
	const char *code;
	const char *field; /* "" = null */
};

static const struct bad bad_inputs[] = {
	{"not json", "hello", "malformed", ""},
	{"empty body", "", "malformed", ""},
	{"truncated", RUN_HEAD, "malformed", ""},
	{"NaN", RUN("") "x", "malformed", ""},
	{"NaN value", RUN_HEAD RUN_TEST "\"metrics\":{\"a.b\":[1,NaN]}}", "malformed", ""},
	{"Infinity", RUN_HEAD RUN_TEST "\"metrics\":{\"a.b\":Infinity}}", "malformed", ""},
	{"1e999", RUN_HEAD RUN_TEST "\"metrics\":{\"a.b\":[1e999]}}", "malformed", ""},
	{"-1e999", RUN_HEAD RUN_TEST "\"metrics\":{\"a.b\":[-1e999]}}", "malformed", ""},
	{"invalid utf-8", RUN_HEAD RUN_TEST "\"command\":\"\xff\xfe\"," RUN_METRICS "}", "malformed",
	 ""},
	{"duplicate keys", RUN("\"run_id\":\"r2\","), "malformed", ""},
	{"nesting too deep",
	 RUN_HEAD RUN_TEST "\"environment\":{\"a\":" "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
			   "}," RUN_METRICS "}",
	 "malformed", ""},
	{"top-level array", "[1,2]", "invalid", ""},
	{"missing run_id", "{\"machine\":{\"name\":\"m\"},\"kernel\":{\"release\":\"r\"}," RUN_TEST
			   RUN_METRICS "}",
	 "invalid", "run_id"},
	{"run_id bad chars", "{\"run_id\":\"a b\",\"machine\":{\"name\":\"m\"}}", "invalid", "run_id"},
	{"run_id too long",
	 "{\"run_id\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
	 "invalid", "run_id"},
	{"run_id number", "{\"run_id\":5}", "invalid", "run_id"},
	{"machine not object", RUN("\"machine\":\"m1\",") , "malformed", ""},
	{"machine name missing",
	 "{\"run_id\":\"r\",\"machine\":{\"cpu_model\":\"x\"},\"kernel\":{\"release\":\"r\"}," RUN_TEST
	 RUN_METRICS "}",
	 "invalid", "machine.name"},
	{"machine name slash",
	 "{\"run_id\":\"r\",\"machine\":{\"name\":\"a/b\"},\"kernel\":{\"release\":\"r\"}," RUN_TEST
	 RUN_METRICS "}",
	 "invalid", "machine.name"},
	{"nr_cpus fraction",
	 "{\"run_id\":\"r\",\"machine\":{\"name\":\"m\",\"nr_cpus\":1.5},\"kernel\":{\"release\":\"r\"},"
	 RUN_TEST RUN_METRICS "}",
	 "invalid", "machine.nr_cpus"},
	{"bad sha",
	 "{\"run_id\":\"r\",\"machine\":{\"name\":\"m\"},\"kernel\":{\"commit\":\"1431d4d11abb\"},"
	 RUN_TEST RUN_METRICS "}",
	 "invalid", "kernel.commit"},
	{"sha not hex",
	 "{\"run_id\":\"r\",\"machine\":{\"name\":\"m\"},\"kernel\":{\"commit\":"
	 "\"zz31d4d11abb265e79cd44bed2f5ea93f1bcc57b\"}," RUN_TEST RUN_METRICS "}",
	 "invalid", "kernel.commit"},
	{"kernel without commit or release",
	 "{\"run_id\":\"r\",\"machine\":{\"name\":\"m\"},\"kernel\":{\"subject\":\"x\"}," RUN_TEST
	 RUN_METRICS "}",
	 "invalid", "kernel"},
	{"bad date",
	 "{\"run_id\":\"r\",\"machine\":{\"name\":\"m\"},\"kernel\":{\"release\":\"r\","
	 "\"date\":\"2020-02-30T00:00:00Z\"}," RUN_TEST RUN_METRICS "}",
	 "invalid", "kernel.date"},
	{"files not strings",
	 "{\"run_id\":\"r\",\"machine\":{\"name\":\"m\"},\"kernel\":{\"release\":\"r\","
	 "\"files\":[\"mm/vmscan.c\",7]}," RUN_TEST RUN_METRICS "}",
	 "invalid", "kernel.files[1]"},
	{"missing suite", RUN_HEAD "\"test\":{\"params\":{}}," RUN_METRICS "}", "invalid",
	 "test.suite"},
	{"param value object", RUN_HEAD "\"test\":{\"suite\":\"s\",\"params\":{\"k\":{}}}," RUN_METRICS "}",
	 "invalid", "test.params.k"},
	{"variant key with space", RUN("\"variant\":{\"lru gen\":\"on\"},"), "invalid",
	 "variant.lru gen"},
	{"started_at not a date", RUN("\"started_at\":\"yesterday\","), "invalid", "started_at"},
	{"negative duration", RUN("\"duration_s\":-1,"), "invalid", "duration_s"},
	{"exit status string", RUN("\"exit_status\":\"0\","), "invalid", "exit_status"},
	{"missing metrics", RUN_HEAD RUN_TEST "\"command\":\"x\"}", "invalid", "metrics"},
	{"empty metrics", RUN_HEAD RUN_TEST "\"metrics\":{}}", "invalid", "metrics"},
	{"metric string value", RUN_HEAD RUN_TEST "\"metrics\":{\"a.b\":[1,2,3,\"4\"]}}", "invalid",
	 "metrics.a.b[3]"},
	{"metric null value",
	 RUN_HEAD RUN_TEST "\"metrics\":{\"vm-scalability.throughput\":[1,2,3,null]}}", "invalid",
	 "metrics.vm-scalability.throughput[3]"},
	{"metric empty array", RUN_HEAD RUN_TEST "\"metrics\":{\"a.b\":[]}}", "invalid", "metrics.a.b"},
	{"metric boolean", RUN_HEAD RUN_TEST "\"metrics\":{\"a.b\":true}}", "invalid", "metrics.a.b"},
	{"metric nested array", RUN_HEAD RUN_TEST "\"metrics\":{\"a.b\":[[1]]}}", "invalid",
	 "metrics.a.b[0]"},
	{"metric name with space", RUN_HEAD RUN_TEST "\"metrics\":{\"a b\":1}}", "invalid",
	 "metrics.a b"},
	{"unknown direction", RUN("\"directions\":{\"a.b\":\"sideways\"},"), "invalid",
	 "directions.a.b"},
	{"unit too long", RUN("\"units\":{\"a.b\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"},"),
	 "invalid", "units.a.b"},
	{"batch empty", "{\"runs\":[]}", "invalid", "runs"},
	{"batch not array", "{\"runs\":{}}", "invalid", "runs"},
	{"batch bad second run", "{\"runs\":[" RUN("") "," RUN_HEAD RUN_TEST "\"metrics\":{\"x.y\":[1,\"a\"]}}]}",
	 "invalid", "runs[1].metrics.x.y[1]"},
	{"batch repeats run_id", "{\"runs\":[" RUN("") "," RUN("") "]}", "invalid", "runs[1].run_id"},
	{"NUL in string", RUN("\"command\":\"a\\u0000b\","), "malformed", ""},
};

/* One test walks the table: Criterion's parameterized tests crash in this
 * environment's sandbox (boxfort), so the rows are checked in a loop. */
Test(decode, bad_inputs)
{
	size_t n = sizeof(bad_inputs) / sizeof(bad_inputs[0]);

	cr_assert_geq(n, 25);
	for (size_t i = 0; i < n; i++) {
		const struct bad *b = &bad_inputs[i];
		struct ingest in;
		struct decode_error err;
		int rc = ingest_decode_runs(b->body, strlen(b->body), &in, &err);

		cr_expect_eq(rc, -1, "%s: accepted", b->name);
		if (rc != -1) {
			ingest_release(&in);
			continue;
		}
		cr_expect_eq(err.status, 400, "%s: status %d", b->name, err.status);
		cr_expect_str_eq(err.code, b->code, "%s: code %s (%s)", b->name, err.code,
				 err.message);
		cr_expect_str_eq(err.field, b->field, "%s: field \"%s\" (%s)", b->name, err.field,
				 err.message);
		cr_expect(strlen(err.message) > 0, "%s: no message", b->name);
		ingest_release(&in);
	}
}

Test(decode, malformed_names_line_and_column)
{
	const char *body = "{\n  \"run_id\": \"r\",\n  \"x\": NaN\n}";
	struct ingest in;
	struct decode_error err;

	cr_assert_eq(ingest_decode_runs(body, strlen(body), &in, &err), -1);
	cr_assert_str_eq(err.code, "malformed");
	cr_expect(strstr(err.message, "line 3") != NULL, "message: %s", err.message);
	cr_expect(strstr(err.message, "column") != NULL, "message: %s", err.message);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p;
	long n;

	cr_assert_not_null(f, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	p = malloc((size_t)n + 1);
	cr_assert_eq(fread(p, 1, (size_t)n, f), (size_t)n);
	p[n] = '\0';
	fclose(f);
	*len = (size_t)n;
	return p;
}

Test(decode, contract_example)
{
	size_t len;
	char *body = slurp("tests/fixtures/contract-example.json", &len);
	struct ingest in;
	struct decode_error err;

	cr_assert_eq(ingest_decode_runs(body, len, &in, &err), 0, "%s %s", err.field, err.message);
	cr_assert_eq(in.nruns, 1);
	cr_expect_str_eq(in.runs[0].run_id, "lab1-2020-06-16-0042");
	cr_expect_str_eq(in.runs[0].suite, "vm-scalability");
	cr_expect_eq(in.runs[0].nvalues, 4);
	cr_expect_eq(in.runs[0].has_sha, 1);
	cr_expect_str_eq(in.runs[0].params, "{\"runtime\":\"300s\",\"test\":\"lru-file-mmap-read\"}");
	cr_expect_str_eq(in.runs[0].variant, "{\"lru_gen\":\"off\",\"thp\":\"never\"}");
	/* numbers keep their shortest spelling in the stored document */
	cr_expect(strstr(in.runs[0].doc, "[20717269,20699112,20735410]") != NULL, "%s",
		  in.runs[0].doc);
	cr_expect(strstr(in.runs[0].doc, "[13.11]") != NULL);
	cr_expect(strstr(in.runs[0].commit, "\"sha\":\"1431d4d11abb265e79cd44bed2f5ea93f1bcc57b\""));
	cr_expect_eq(json_array_size(in.ignored), 0);
	ingest_release(&in);
	free(body);
}

Test(decode, unknown_keys_are_listed_and_dropped)
{
	const char *body = RUN_HEAD RUN_TEST "\"colour\":\"blue\",\"machine2\":1," RUN_METRICS "}";
	const char *nested = "{\"runs\":[{\"run_id\":\"r1\",\"machine\":{\"name\":\"m1\",\"rack\":4},"
			     "\"kernel\":{\"release\":\"6.1\"}," RUN_TEST RUN_METRICS "}],\"note\":1}";
	struct ingest in;
	struct decode_error err;

	cr_assert_eq(ingest_decode_runs(body, strlen(body), &in, &err), 0, "%s", err.message);
	cr_expect_eq(json_array_size(in.ignored), 2);
	cr_expect_str_eq(json_string_value(json_array_get(in.ignored, 0)), "colour");
	cr_expect_str_eq(json_string_value(json_array_get(in.ignored, 1)), "machine2");
	cr_expect_null(strstr(in.runs[0].doc, "colour"));
	ingest_release(&in);

	cr_assert_eq(ingest_decode_runs(nested, strlen(nested), &in, &err), 0, "%s", err.message);
	cr_expect_eq(in.batch, 1);
	cr_expect_str_eq(json_string_value(json_array_get(in.ignored, 0)), "runs[0].machine.rack");
	cr_expect_str_eq(json_string_value(json_array_get(in.ignored, 1)), "note");
	ingest_release(&in);
}

Test(decode, scalar_metric_and_numeric_params)
{
	const char *body = RUN_HEAD "\"test\":{\"suite\":\"will-it-scale\",\"params\":{\"nr_task\":16,"
			   "\"mode\":\"process\"}},\"metrics\":{\"will-it-scale.per_process_ops\":1e3}}";
	struct ingest in;
	struct decode_error err;

	cr_assert_eq(ingest_decode_runs(body, strlen(body), &in, &err), 0, "%s", err.message);
	cr_expect_eq(in.runs[0].nvalues, 1);
	cr_expect_str_eq(in.runs[0].params, "{\"mode\":\"process\",\"nr_task\":\"16\"}");
	cr_expect(strstr(in.runs[0].doc, "\"will-it-scale.per_process_ops\":1000") != NULL, "%s",
		  in.runs[0].doc);
	ingest_release(&in);
}

Test(decode, commits_body)
{
	const char *ok = "[{\"sha\":\"1431d4d11abb265e79cd44bed2f5ea93f1bcc57b\",\"subject\":\"x\","
			 "\"series\":\"per-memcg-lru_lock v18\"}]";
	const char *bad = "{\"commits\":[{\"sha\":\"1431d4d11abb265e79cd44bed2f5ea93f1bcc57b\"},"
			  "{\"subject\":\"no sha\"}]}";
	struct ingest in;
	struct decode_error err;

	cr_assert_eq(ingest_decode_commits(ok, strlen(ok), &in, &err), 0, "%s", err.message);
	cr_expect_eq(in.ncommits, 1);
	ingest_release(&in);
	cr_assert_eq(ingest_decode_commits(bad, strlen(bad), &in, &err), -1);
	cr_expect_str_eq(err.field, "commits[1].sha");
}

Test(decode, iso8601)
{
	cr_expect_eq(iso8601_check("2020-06-16T10:00:00Z"), 0);
	cr_expect_eq(iso8601_check("2020-06-16T10:00:00.123+02:00"), 0);
	cr_expect_eq(iso8601_check("2024-02-29T00:00:00Z"), 0);
	cr_expect_eq(iso8601_check("2023-02-29T00:00:00Z"), -1);
	cr_expect_eq(iso8601_check("2020-13-01T00:00:00Z"), -1);
	cr_expect_eq(iso8601_check("2020-06-16"), -1);
	cr_expect_eq(iso8601_check("2020-06-16T10:00:00"), -1);
	cr_expect_eq(iso8601_check("2020-06-16T25:00:00Z"), -1);
}

Test(decode, numbers_beyond_64_bit_integers)
{
	/* shortest spelling must not cast them to long long (undefined) */
	const char *body = RUN_HEAD RUN_TEST "\"metrics\":{\"x\":[1e19,-9.3e18,123456789012345678]}}";
	struct ingest in;
	struct decode_error err;

	cr_assert_eq(ingest_decode_runs(body, strlen(body), &in, &err), 0, "%s", err.message);
	cr_expect(strstr(in.runs[0].doc, "[1e+19,-9.3e+18,1.2345678901234568e+17]") != NULL, "%s",
		  in.runs[0].doc);
	ingest_release(&in);
}
