/*
 * ingest_decode.c - turns a request body into validated runs. Order of work:
 * a depth pre-scan (so jansson never recurses past our limit), jansson with
 * duplicate keys rejected and all numbers as doubles, then the contract's
 * field rules, each failure naming the exact path of the offending value.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/jsonw.h"
#include "lib/kperf_limits.h"
#include "lib/util.h"
#include "lib/decode_ctx.h"
#include "lib/ingest_decode.h"

/* ---- field checkers ---- */

static int f_run_id(struct ctx *c, json_t *v)
{
	const char *s;
	if (dc_want_string(c, v, 1, LIMIT_RUN_ID, &s))
		return -1;
	if (ingest_check_pattern(s, LIMIT_RUN_ID, "._:-"))
		return dc_fail(c, "must be 1-%d of A-Za-z0-9._:-", LIMIT_RUN_ID);
	return 0;
}

static int f_text(struct ctx *c, json_t *v)
{
	const char *s;
	return dc_want_string(c, v, 0, LIMIT_TEXT, &s);
}

static int f_long_text(struct ctx *c, json_t *v)
{
	const char *s;
	return dc_want_string(c, v, 0, LIMIT_LONG_TEXT, &s);
}

static int f_output_tail(struct ctx *c, json_t *v)
{
	const char *s;
	return dc_want_string(c, v, 0, LIMIT_OUTPUT_TAIL, &s);
}

static int f_count(struct ctx *c, json_t *v)
{
	return dc_want_integer(c, v, 0, 1048576);
}

static int f_memory(struct ctx *c, json_t *v)
{
	return dc_want_integer(c, v, 0, 1099511627776.0);
}

static int f_exit_status(struct ctx *c, json_t *v)
{
	return dc_want_integer(c, v, -2147483648.0, 2147483647.0);
}

static int f_duration(struct ctx *c, json_t *v)
{
	if (!json_is_number(v) || json_number_value(v) < 0)
		return dc_fail(c, "must be a number of seconds >= 0");
	return 0;
}

static int f_date(struct ctx *c, json_t *v)
{
	const char *s;
	if (dc_want_string(c, v, 1, 64, &s))
		return -1;
	if (iso8601_check(s))
		return dc_fail(c, "must be an ISO 8601 date-time such as 2020-06-16T10:00:00Z");
	return 0;
}

static int f_machine_name(struct ctx *c, json_t *v)
{
	const char *s;
	if (dc_want_string(c, v, 1, LIMIT_MACHINE_NAME, &s))
		return -1;
	if (ingest_check_pattern(s, LIMIT_MACHINE_NAME, "._-"))
		return dc_fail(c, "must be 1-%d of A-Za-z0-9._-", LIMIT_MACHINE_NAME);
	return 0;
}

static int f_info(struct ctx *c, json_t *v)
{
	return dc_check_map(c, v, LIMIT_KEY, NULL, 0);
}

static int f_machine(struct ctx *c, json_t *v)
{
	static const struct field fields[] = {
		{"name", f_machine_name}, {"cpu_model", f_text},  {"nr_cpus", f_count},
		{"sockets", f_count},      {"memory_mb", f_memory}, {"numa_nodes", f_count},
		{"info", f_info},          {NULL, NULL}};
	static const char *const required[] = {"name", NULL};
	return dc_check_object(c, v, fields, required);
}

static int f_sha(struct ctx *c, json_t *v)
{
	if (!json_is_string(v) || ingest_check_hex40(json_string_value(v)))
		return dc_fail(c, "must be a full commit sha of 40 hex digits");
	return 0;
}

static int f_release(struct ctx *c, json_t *v)
{
	const char *s;
	if (dc_want_string(c, v, 1, 128, &s))
		return -1;
	if (dc_check_printable(s, 1, 128))
		return dc_fail(c, "must be 1-128 printable characters without spaces");
	return 0;
}

static int f_files(struct ctx *c, json_t *v)
{
	size_t i;
	json_t *f;

	if (!json_is_array(v))
		return dc_fail(c, "must be an array of file paths");
	if (json_array_size(v) > LIMIT_FILES)
		return dc_fail(c, "more than %d files", LIMIT_FILES);
	json_array_foreach(v, i, f) {
		size_t old = dc_push_index(&c->path, i);
		const char *s;
		int rc = dc_want_string(c, f, 1, 4096, &s);
		dc_pop(&c->path, old);
		if (rc)
			return rc;
	}
	return 0;
}

static int f_config(struct ctx *c, json_t *v)
{
	return dc_check_map(c, v, 128, "_", 1);
}

#define COMMIT_FIELDS                                                                      \
	{"parent", f_sha}, {"subject", f_text}, {"author", f_text}, {"date", f_date},      \
		{"release", f_release}, {"branch", f_text}, {"describe", f_text},          \
		{"series", f_text}, {"message_id", f_text}, {"files", f_files}

static int f_kernel(struct ctx *c, json_t *v)
{
	static const struct field fields[] = {{"commit", f_sha},
					      COMMIT_FIELDS,
					      {"cmdline", f_long_text},
					      {"config", f_config},
					      {NULL, NULL}};
	if (dc_check_object(c, v, fields, NULL))
		return -1;
	if (!json_object_get(v, "commit") && !json_object_get(v, "release"))
		return dc_fail(c, "needs commit (40 hex digits) or release");
	return 0;
}

static int f_params(struct ctx *c, json_t *v)
{
	return dc_check_map(c, v, LIMIT_KEY, "._-", 0);
}

static int f_suite(struct ctx *c, json_t *v)
{
	const char *s;
	if (dc_want_string(c, v, 1, LIMIT_SUITE_NAME, &s))
		return -1;
	if (ingest_check_pattern(s, LIMIT_SUITE_NAME, "._-"))
		return dc_fail(c, "must be 1-%d of A-Za-z0-9._-", LIMIT_SUITE_NAME);
	return 0;
}

static int f_test(struct ctx *c, json_t *v)
{
	static const struct field fields[] = {
		{"suite", f_suite}, {"params", f_params}, {NULL, NULL}};
	static const char *const required[] = {"suite", NULL};
	return dc_check_object(c, v, fields, required);
}

static int f_environment(struct ctx *c, json_t *v)
{
	return dc_check_map(c, v, LIMIT_METRIC_NAME, NULL, 0);
}

static int f_metric_values(struct ctx *c, json_t *v)
{
	size_t i, n;
	json_t *x;

	if (json_is_number(v)) {
		c->nvalues++;
		return 0;
	}
	if (!json_is_array(v))
		return dc_fail(c, "must be a number or an array of numbers");
	n = json_array_size(v);
	if (n == 0)
		return dc_fail(c, "must hold at least one value");
	if (n > LIMIT_VALUES_PER_METRIC)
		return dc_fail(c, "more than %d values", LIMIT_VALUES_PER_METRIC);
	json_array_foreach(v, i, x) {
		if (!json_is_number(x)) {
			size_t old = dc_push_index(&c->path, i);
			int rc = dc_fail(c, "must be a finite number");
			dc_pop(&c->path, old);
			return rc;
		}
	}
	c->nvalues += n;
	return 0;
}

static int f_metrics(struct ctx *c, json_t *v)
{
	const char *key;
	json_t *val;

	if (!json_is_object(v))
		return dc_fail(c, "must be an object of metric name to values");
	if (json_object_size(v) == 0)
		return dc_fail(c, "must hold at least one metric");
	if (json_object_size(v) > LIMIT_METRICS_PER_RUN)
		return dc_fail(c, "more than %d metrics", LIMIT_METRICS_PER_RUN);
	json_object_foreach(v, key, val) {
		size_t old = dc_push_key(&c->path, key);
		int rc = 0;

		if (dc_check_printable(key, 1, LIMIT_METRIC_NAME))
			rc = dc_fail(c, "name must be 1-%d printable ASCII characters without spaces",
				  LIMIT_METRIC_NAME);
		else
			rc = f_metric_values(c, val);
		if (!rc && c->nvalues > LIMIT_VALUES_PER_RUN)
			rc = dc_fail(c, "run holds more than %d values", LIMIT_VALUES_PER_RUN);
		dc_pop(&c->path, old);
		if (rc)
			return rc;
	}
	return 0;
}

/* units and directions: keyed by metric name (the contract's example names
 * one the run does not carry: a direction may be said once for all runs). */
static int check_per_metric(struct ctx *c, json_t *v, int directions)
{
	const char *key;
	json_t *val;

	if (!json_is_object(v))
		return dc_fail(c, "must be an object keyed by metric name");
	json_object_foreach(v, key, val) {
		size_t old = dc_push_key(&c->path, key);
		const char *s = NULL;
		int rc = 0;

		if (dc_check_printable(key, 1, LIMIT_METRIC_NAME))
			rc = dc_fail(c, "key must be a metric name: 1-%d printable ASCII characters",
				  LIMIT_METRIC_NAME);
		else if (directions) {
			if (!json_is_string(val) ||
			    (strcmp(json_string_value(val), "higher") &&
			     strcmp(json_string_value(val), "lower") &&
			     strcmp(json_string_value(val), "none")))
				rc = dc_fail(c, "must be \"higher\", \"lower\" or \"none\"");
		} else {
			rc = dc_want_string(c, val, 1, LIMIT_UNIT, &s);
		}
		dc_pop(&c->path, old);
		if (rc)
			return rc;
	}
	return 0;
}

static int f_job_id(struct ctx *c, json_t *v)
{
	return dc_want_integer(c, v, 1, 9007199254740991.0);
}

/* "job": {"id": N}: the run counts toward job N (POST /api/v1/jobs). */
static int f_job(struct ctx *c, json_t *v)
{
	static const struct field fields[] = {{"id", f_job_id}, {NULL, NULL}};
	static const char *const required[] = {"id", NULL};
	return dc_check_object(c, v, fields, required);
}

static int f_iterations(struct ctx *c, json_t *v)
{
	return dc_want_integer(c, v, 1, 100000);
}

static int f_format(struct ctx *c, json_t *v)
{
	const char *s;
	if (dc_want_string(c, v, 1, LIMIT_SUITE_NAME, &s))
		return -1;
	if (ingest_check_pattern(s, LIMIT_SUITE_NAME, "._-"))
		return dc_fail(c, "must be 1-%d of A-Za-z0-9._-", LIMIT_SUITE_NAME);
	return 0;
}

static int f_bool(struct ctx *c, json_t *v)
{
	return json_is_boolean(v) ? 0 : dc_fail(c, "must be true or false");
}

/* "collector": how kperf-collect ran the benchmark (its options), so that
 * the run can be reproduced with the same command. */
static int f_collector(struct ctx *c, json_t *v)
{
	static const struct field fields[] = {
		{"iterations", f_iterations}, {"format", f_format}, {"profile", f_bool},
		{"lock_contention", f_bool}, {"variant", f_params}, {NULL, NULL}};
	static const char *const required[] = {NULL};
	return dc_check_object(c, v, fields, required);
}

static int f_later(struct ctx *c, json_t *v)
{
	(void)c;
	(void)v;
	return 0; /* checked once metrics are known */
}

/* Build the commit description of a run's kernel block: "commit" becomes "sha". */
static char *commit_of_kernel(json_t *kernel)
{
	static const char *const keys[] = {"parent", "subject", "author",  "date",
					   "release", "branch", "describe", "series",
					   "message_id", "files", NULL};
	json_t *out = json_object();
	char *s;

	if (json_object_get(kernel, "commit"))
		json_object_set(out, "sha", json_object_get(kernel, "commit"));
	for (const char *const *k = keys; *k; k++)
		if (json_object_get(kernel, *k))
			json_object_set(out, *k, json_object_get(kernel, *k));
	s = jsonw_dump(out, 0);
	json_decref(out);
	return s;
}

static int decode_run(struct ctx *c, json_t *run, struct run_in *out)
{
	static const struct field fields[] = {
		{"run_id", f_run_id},	 {"machine", f_machine},	 {"kernel", f_kernel},
		{"variant", f_params},	 {"test", f_test},		 {"started_at", f_date},
		{"duration_s", f_duration}, {"command", f_long_text},	 {"exit_status", f_exit_status},
		{"output_tail", f_output_tail}, {"environment", f_environment}, {"metrics", f_metrics},
		{"units", f_later},	 {"directions", f_later},	 {"job", f_job},
		{"collector", f_collector}, {NULL, NULL}};
	static const char *const required[] = {"run_id", "machine", "kernel", "test", "metrics",
					       NULL};
	json_t *empty;
	size_t old;

	c->nvalues = 0;
	if (dc_check_object(c, run, fields, required))
		return -1;
	if (json_object_get(run, "units")) {
		old = dc_push_key(&c->path, "units");
		if (check_per_metric(c, json_object_get(run, "units"), 0))
			return -1;
		dc_pop(&c->path, old);
	}
	if (json_object_get(run, "directions")) {
		old = dc_push_key(&c->path, "directions");
		if (check_per_metric(c, json_object_get(run, "directions"), 1))
			return -1;
		dc_pop(&c->path, old);
	}
	out->run_id = json_string_value(json_object_get(run, "run_id"));
	out->suite = json_string_value(json_object_get(json_object_get(run, "test"), "suite"));
	out->nvalues = c->nvalues;
	out->json = run;
	out->doc = jsonw_dump(run, 0);
	out->machine = jsonw_dump(json_object_get(run, "machine"), 0);
	out->commit = commit_of_kernel(json_object_get(run, "kernel"));
	out->has_sha = json_object_get(json_object_get(run, "kernel"), "commit") != NULL;
	out->job_id = (long)json_number_value(json_object_get(json_object_get(run, "job"), "id"));
	empty = json_object();
	out->params = dc_canonical_map(json_object_get(json_object_get(run, "test"), "params")
					    ?: empty);
	out->variant = dc_canonical_map(json_object_get(run, "variant") ?: empty);
	json_decref(empty);
	return 0;
}

static void ctx_init(struct ctx *c, struct ingest *in, struct decode_error *err)
{
	memset(in, 0, sizeof(*in));
	memset(c, 0, sizeof(*c));
	memset(err, 0, sizeof(*err));
	c->err = err;
	in->ignored = json_array();
	c->ignored = in->ignored;
}

int ingest_decode_test(json_t *obj, const char *field, int want_variant, char **params,
		       char **variant, struct decode_error *err)
{
	static const struct field with_variant[] = {
		{"suite", f_suite}, {"params", f_params}, {"variant", f_params}, {NULL, NULL}};
	static const struct field test_only[] = {
		{"suite", f_suite}, {"params", f_params}, {NULL, NULL}};
	static const char *const required[] = {"suite", NULL};
	json_t *copy = json_deep_copy(obj), *empty = json_object();
	struct ctx c;
	int rc;

	memset(&c, 0, sizeof(c));
	memset(err, 0, sizeof(*err));
	c.err = err;
	c.ignored = json_array();
	if (field && *field)
		dc_push_key(&c.path, field);
	rc = copy ? dc_check_object(&c, copy, want_variant ? with_variant : test_only, required)
		  : dc_fail(&c, "must be an object");
	if (!rc) {
		*params = dc_canonical_map(json_object_get(copy, "params") ?: empty);
		if (variant)
			*variant = dc_canonical_map(json_object_get(copy, "variant") ?: empty);
	}
	json_decref(copy);
	json_decref(empty);
	json_decref(c.ignored);
	return rc;
}

int ingest_decode_runs(const char *body, size_t len, struct ingest *in, struct decode_error *err)
{
	struct ctx c;
	json_t *runs;

	ctx_init(&c, in, err);
	in->root = dc_parse(body, len, err);
	if (!in->root)
		goto fail;
	if (!json_is_object(in->root)) {
		dc_fail(&c, "must be a run object or {\"runs\": [...]}");
		goto fail;
	}
	runs = json_object_get(in->root, "runs");
	if (!runs) {
		in->nruns = 1;
		in->runs = xcalloc(1, sizeof(*in->runs));
		if (decode_run(&c, in->root, &in->runs[0]))
			goto fail;
		return 0;
	}
	in->batch = 1;
	dc_push_key(&c.path, "runs");
	if (!json_is_array(runs) || json_array_size(runs) == 0) {
		dc_fail(&c, "must be a non-empty array of runs");
		goto fail;
	}
	if (json_array_size(runs) > LIMIT_RUNS_PER_BATCH) {
		dc_fail(&c, "more than %d runs in one batch", LIMIT_RUNS_PER_BATCH);
		goto fail;
	}
	in->nruns = json_array_size(runs);
	in->runs = xcalloc(in->nruns, sizeof(*in->runs));
	for (size_t i = 0; i < in->nruns; i++) {
		size_t old = dc_push_index(&c.path, i);
		if (decode_run(&c, json_array_get(runs, i), &in->runs[i]))
			goto fail;
		dc_pop(&c.path, old);
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(in->runs[j].run_id, in->runs[i].run_id)) {
				dc_push_index(&c.path, i);
				dc_push_key(&c.path, "run_id");
				dc_fail(&c, "repeats the run_id of runs[%zu]", j);
				goto fail;
			}
		}
	}
	{
		/* Unknown keys next to "runs" are ignored like any other. */
		const char *key;
		json_t *val;
		void *tmp;
		json_object_foreach_safe(in->root, tmp, key, val) {
			(void)val;
			if (strcmp(key, "runs") && json_array_size(in->ignored) < DECODE_IGNORED_MAX)
				json_array_append_new(in->ignored, json_string(key));
		}
	}
	return 0;
fail:
	ingest_release(in);
	return -1;
}

static int f_commit_sha(struct ctx *c, json_t *v)
{
	return f_sha(c, v);
}

int ingest_decode_commits(const char *body, size_t len, struct ingest *in,
			  struct decode_error *err)
{
	static const struct field fields[] = {{"sha", f_commit_sha}, COMMIT_FIELDS, {NULL, NULL}};
	static const char *const required[] = {"sha", NULL};
	struct ctx c;
	json_t *list;
	size_t i;

	ctx_init(&c, in, err);
	in->root = dc_parse(body, len, err);
	if (!in->root)
		goto fail;
	list = in->root;
	if (json_is_object(list)) {
		dc_push_key(&c.path, "commits");
		list = json_object_get(list, "commits");
	}
	if (!json_is_array(list) || json_array_size(list) == 0) {
		dc_fail(&c, "must be a non-empty array of commits");
		goto fail;
	}
	if (json_array_size(list) > LIMIT_COMMITS_PER_POST) {
		dc_fail(&c, "more than %d commits", LIMIT_COMMITS_PER_POST);
		goto fail;
	}
	in->ncommits = json_array_size(list);
	in->commits = xcalloc(in->ncommits, sizeof(*in->commits));
	for (i = 0; i < in->ncommits; i++) {
		size_t old = dc_push_index(&c.path, i);
		json_t *obj = json_array_get(list, i);
		if (dc_check_object(&c, obj, fields, required))
			goto fail;
		in->commits[i] = jsonw_dump(obj, 0);
		dc_pop(&c.path, old);
	}
	return 0;
fail:
	ingest_release(in);
	return -1;
}

void ingest_release(struct ingest *in)
{
	for (size_t i = 0; in->runs && i < in->nruns; i++) {
		free(in->runs[i].doc);
		free(in->runs[i].machine);
		free(in->runs[i].commit);
		free(in->runs[i].params);
		free(in->runs[i].variant);
	}
	free(in->runs);
	for (size_t i = 0; in->commits && i < in->ncommits; i++)
		free(in->commits[i]);
	free(in->commits);
	json_decref(in->root);
	json_decref(in->ignored);
	memset(in, 0, sizeof(*in));
}
