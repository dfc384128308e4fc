/*
 * test_parsers_custom.c - the formats of benchmarks without a parser:
 * --format kv (LKP's "name: value" stats lines, a repeated name a series)
 * and --format json (a flat object of name -> number or list of numbers):
 * what they read, the ingest contract's limits, and an error naming the
 * line or key for everything else, with nothing half-read; end to end,
 * `run --format kv` around a command printing stats posts them to kperfd.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "collectors/parse/metrics.h"
#include "collectors/parse/parse.h"
#include "tests/integration/harness.h"
#include "tests/collect/testutil.h"

static json_t *values(struct parse_ctx *pc, const char *name)
{
	json_t *v = json_object_get(parse_metrics(pc), name);
	cr_assert(json_is_array(v), "no metric %s", name);
	return v;
}

static double at(struct parse_ctx *pc, const char *name, size_t i)
{
	json_t *v = json_array_get(values(pc, name), i);
	cr_assert_not_null(v, "%s has no value %zu", name, i);
	return json_number_value(v);
}

Test(custom, kv_reads_lkp_stats_lines)
{
	static const char text[] = "# written by ./bench\n"
				   "mybench.throughput: 20717269\n"
				   "\n"
				   "  mybench.latency_ms:   1.5  \n"
				   "mybench.throughput: 20699112\r\n"
				   "mybench.throughput: -3.25e2\n"
				   "lock_stat.&(&zone->lock)->rlock:0.contentions: 7\n"
				   "mybench.ok: +4";
	struct parse_ctx pc;

	parse_ctx_init(&pc, "stats");
	cr_assert_eq(parse_run(parser_find("kv"), &pc, text, strlen(text)), 0, "%s", pc.err);
	cr_assert_eq(json_object_size(parse_metrics(&pc)), 4);
	cr_expect_eq(json_array_size(values(&pc, "mybench.throughput")), 3, "a repeated name is a "
									     "series");
	cr_expect_float_eq(at(&pc, "mybench.throughput", 0), 20717269, 1e-9);
	cr_expect_float_eq(at(&pc, "mybench.throughput", 1), 20699112, 1e-9);
	cr_expect_float_eq(at(&pc, "mybench.throughput", 2), -325, 1e-9);
	cr_expect_float_eq(at(&pc, "mybench.latency_ms", 0), 1.5, 1e-12);
	/* the value follows the last colon: a name may hold colons */
	cr_expect_float_eq(at(&pc, "lock_stat.&(&zone->lock)->rlock:0.contentions", 0), 7, 1e-12);
	cr_expect_float_eq(at(&pc, "mybench.ok", 0), 4, 1e-12);
	parse_ctx_release(&pc);
}

Test(custom, json_reads_a_flat_object)
{
	static const char text[] = "{\"mybench.throughput\": [20717269, 20699112.5, -1e3],\n"
				   " \"mybench.latency_ms\": 1.5,\n"
				   " \"mybench.big\": 123456789012}\n";
	struct parse_ctx pc;

	parse_ctx_init(&pc, "out.json");
	cr_assert_eq(parse_run(parser_find("json"), &pc, text, strlen(text)), 0, "%s", pc.err);
	cr_assert_eq(json_object_size(parse_metrics(&pc)), 3);
	cr_expect_eq(json_array_size(values(&pc, "mybench.throughput")), 3);
	cr_expect_float_eq(at(&pc, "mybench.throughput", 1), 20699112.5, 1e-9);
	cr_expect_float_eq(at(&pc, "mybench.throughput", 2), -1000, 1e-9);
	cr_expect_float_eq(at(&pc, "mybench.latency_ms", 0), 1.5, 1e-12);
	cr_expect_float_eq(at(&pc, "mybench.big", 0), 123456789012.0, 1e-3);
	parse_ctx_release(&pc);
}

/* (format, text, start of the message, words in it) */
Test(custom, errors_name_the_line_or_key)
{
	char longname[300], longkv[400], longjson[400];
	const struct {
		const char *format, *text, *where, *says;
	} rows[] = {
		{"kv", "a.b: 1\nc.d 2\n", "in:2:", "expected \"name: value\""},
		{"kv", "a.b: 1\nmy bench.x: 2\n", "in:2:", "byte 3 is a space"},
		{"kv", "a.b: 1\n\n\na.b: fast\n", "in:4:", "\"a.b\": value \"fast\" is not a number"},
		{"kv", "a.b: nan\n", "in:1:", "not a number"},
		{"kv", "a.b: inf\n", "in:1:", "not a number"},
		{"kv", "a.b: 1e999\n", "in:1:", "not a number"},
		{"kv", "a.b: 0x10\n", "in:1:", "not a number"},
		{"kv", "a.b: 1 2\n", "in:1:", "not a number"},
		{"kv", "a.b:\n", "in:1:", "not a number"},
		{"kv", ": 5\n", "in:1:", "empty metric name"},
		{"kv", "a.\x01: 5\n", "in:1:", "control"},
		{"kv", "a.b: 1\na.c: 2\0a.d: 3\n", "in:2:", "NUL"},
		{"kv", longkv, "in:1:", "257 characters long (at most 256)"},
		{"json", "[1, 2]", "in:1:", "expected an object"},
		{"json", "{\"a.b\": 1,\n \"a.c\": \"1\"}", "in:2:", "key \"a.c\": expected a number"},
		{"json", "{\"a.b\": 1,\n\n \"a.c\": []}", "in:3:", "key \"a.c\": an empty list"},
		{"json", "{\"a.b\": [1,\n \"x\"]}", "in:1:", "key \"a.b\": element 1 is not a number"},
		{"json", "{\"a.b\": {\"c\": 1}}", "in:1:", "key \"a.b\": expected a number"},
		{"json", "{\"a.b\": null}", "in:1:", "expected a number"},
		{"json", "{\"a.b\": true}", "in:1:", "expected a number"},
		{"json", "{\"a.b\": 1,\n \"a.b\": 2}", "in:2:", "duplicate"},
		{"json", "{\"a.b\":\n 1e999}", "in:2:", "overflow"},
		{"json", "{\"a.b\": NaN}", "in:1:", "column"},
		{"json", "{\"a.b\": [1, 2", "in:1:", "column"},
		{"json", "{\"x\": 1,\n \"my bench\": 1}", "in:2:", "key \"my bench\": metric name"},
		{"json", longjson, "in:1:", "257 characters long"},
		{"json", "", "in:1:", "column"},
	};

	memset(longname, 'x', 257);
	longname[257] = '\0';
	snprintf(longkv, sizeof(longkv), "%s: 1\n", longname);
	snprintf(longjson, sizeof(longjson), "{\"%s\": 1}", longname);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct parse_ctx pc;
		/* the NUL row is longer than strlen says */
		size_t len = strlen(rows[i].text);
		if (strstr(rows[i].says, "NUL"))
			len = sizeof("a.b: 1\na.c: 2\0a.d: 3\n") - 1;
		parse_ctx_init(&pc, "in");
		cr_expect_eq(parse_run(parser_find(rows[i].format), &pc, rows[i].text, len), -1,
			     "row %zu: %s accepted %s", i, rows[i].format, rows[i].text);
		cr_expect(!strncmp(pc.err, rows[i].where, strlen(rows[i].where)) &&
				  strstr(pc.err, rows[i].says),
			  "row %zu: \"%s\" should start with %s and say %s", i, pc.err,
			  rows[i].where, rows[i].says);
		cr_expect_eq(json_object_size(parse_metrics(&pc)), 0, "row %zu: half-read", i);
		parse_ctx_release(&pc);
	}
}

/* A name of exactly 256 characters is one the server takes. */
Test(custom, names_up_to_the_contract_limit)
{
	char text[400];
	struct parse_ctx pc;

	memset(text, 'n', METRIC_NAME_MAX);
	snprintf(text + METRIC_NAME_MAX, sizeof(text) - METRIC_NAME_MAX, ": 1\n");
	parse_ctx_init(&pc, "in");
	cr_assert_eq(parse_run(parser_find("kv"), &pc, text, strlen(text)), 0, "%s", pc.err);
	parse_ctx_release(&pc);
}

/* The run limits: values per metric, metrics, values in all; the error names the first
 * line past the limit. */
Test(custom, limits_are_errors_at_the_line_past_them)
{
	static const struct {
		int names, per_name; /* lines: per_name rounds of names distinct names */
		size_t bad_line;     /* 0: accepted */
		const char *says;
	} rows[] = {
		{1, PARSE_VALUES_PER_METRIC_MAX, 0, NULL},
		{1, PARSE_VALUES_PER_METRIC_MAX + 1, PARSE_VALUES_PER_METRIC_MAX + 1,
		 "more than 10000 values"},
		{PARSE_METRICS_MAX, 1, 0, NULL},
		{PARSE_METRICS_MAX + 1, 1, PARSE_METRICS_MAX + 1, "more than 10000 metrics"},
		{20, PARSE_VALUES_MAX / 20, 0, NULL},
		{20, PARSE_VALUES_MAX / 20 + 1, PARSE_VALUES_MAX + 1, "more than 100000 values in all"},
	};
	for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
		struct buf b = BUF_INIT, j = BUF_INIT;
		struct parse_ctx pc;
		char where[64];
		int rc;

		for (int k = 0; k < rows[r].per_name; k++)
			for (int n = 0; n < rows[r].names; n++)
				buf_printf(&b, "bench.m%d: %d\n", n, k);
		parse_ctx_init(&pc, "in");
		rc = parse_run(parser_find("kv"), &pc, buf_str(&b), b.len);
		if (!rows[r].bad_line) {
			cr_expect_eq(rc, 0, "row %zu: %s", r, pc.err);
		} else {
			snprintf(where, sizeof(where), "in:%zu:", rows[r].bad_line);
			cr_expect_eq(rc, -1, "row %zu accepted", r);
			cr_expect(!strncmp(pc.err, where, strlen(where)) &&
					  strstr(pc.err, rows[r].says),
				  "row %zu: \"%s\" should start with %s and say %s", r, pc.err, where,
				  rows[r].says);
		}
		parse_ctx_release(&pc);
		/* the same in JSON: one list per name */
		buf_putc(&j, '{');
		for (int n = 0; n < rows[r].names; n++) {
			buf_printf(&j, "%s\n\"bench.m%d\": [", n ? "," : "", n);
			for (int k = 0; k < rows[r].per_name; k++)
				buf_printf(&j, "%s%d", k ? "," : "", k);
			buf_putc(&j, ']');
		}
		buf_puts(&j, "}\n");
		parse_ctx_init(&pc, "in");
		rc = parse_run(parser_find("json"), &pc, buf_str(&j), j.len);
		if (!rows[r].bad_line)
			cr_expect_eq(rc, 0, "row %zu (json): %s", r, pc.err);
		else
			cr_expect(rc == -1 && strstr(pc.err, "key \"bench.m") &&
					  strstr(pc.err, rows[r].says),
				  "row %zu (json): \"%s\"", r, pc.err);
		parse_ctx_release(&pc);
		buf_release(&b);
		buf_release(&j);
	}
}

KPERFD_URL_SUITE(custom_e2e, 180);

/* A benchmark without a parser, two iterations, its stats lines posted as a series. */
Test(custom_e2e, run_format_kv_posts_the_benchmarks_own_numbers)
{
	char dir[4096], spool[4200], path[300];
	const char *args[] = {"--server", url, "--token", TOKEN_COLLECTOR, "--machine", "lab-kv",
			      "--spool", spool, "run", "--suite", "mybench", "--format", "kv",
			      "--iterations", "2", "--", "sh", "-c",
			      "printf 'mybench.ops_per_sec: 1234.5\\nmybench.latency_ms: 2\\n"
			      "mybench.latency_ms: 4\\n'",
			      NULL};
	char *out, *err, *id;
	struct resp r;
	json_t *doc, *m;
	int rc;

	tu_tmpdir(dir, sizeof(dir));
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	rc = tu_collect(args, NULL, &out, &err);
	cr_assert_eq(rc, 0, "exit %d: %s %s", rc, out, err);
	id = strstr(out, "run ");
	cr_assert_not_null(id, "%s", out);
	id += 4;
	*strchr(id, ' ') = '\0';
	snprintf(path, sizeof(path), "/api/v1/runs/%s", id);
	http_get(&K, path, &r);
	cr_assert_eq(r.status, 200, "%s", r.body);
	doc = resp_json(&r);
	m = json_object_get(doc, "metrics");
	cr_expect_eq(json_array_size(json_object_get(m, "mybench.ops_per_sec")), 2,
		     "one value per iteration");
	cr_expect_float_eq(json_number_value(json_array_get(json_object_get(m, "mybench.ops_per_sec"),
							    1)),
			   1234.5, 1e-9);
	cr_expect_eq(json_array_size(json_object_get(m, "mybench.latency_ms")), 4,
		     "two values in each of two iterations");
	json_decref(doc);
	resp_release(&r);
	free(out);
	free(err);
}
