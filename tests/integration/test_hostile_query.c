/*
 * test_hostile_query.c - SQL injection in every query parameter and path
 * segment of the read API (runs, commits, machines, tests, metrics, series,
 * compare, trend, regressions, subscriptions, alerts, unsubscribe): each
 * string of hostile_injections answers an empty list, a 400 naming the
 * parameter or a 404, and changes nothing. Then SQL-looking values that
 * are stored are found by those very values, and by nothing wider, and a
 * trend stays readable while new commits arrive.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/integration/harness.h"
#include "tests/integration/hostile.h"

static struct kperfd K;
static PGconn *db;

/* No decision worker: these tests read, and the worker's change-point scan
 * meets the trend_load race (see the last test) when two commits arrive. */
static void setup(void)
{
	static const char *const env[] = {"KPERF_WORKER=0", NULL};

	kperfd_env(env);
	kperfd_start(&K, NULL);
	kperfd_env(NULL);
	db = harness_db(&K);
}

static void teardown(void)
{
	PQfinish(db);
	kperfd_stop(&K);
}

/* What a parameter answers to a value that matches nothing. */
enum qcls {
	Q_EMPTY_LIST, /* 200, "total": 0 */
	Q_NO_ROWS,    /* 200, compare's "rows": [] */
	Q_INVALID,    /* 400 invalid, naming the parameter */
	Q_NOT_FOUND,  /* 404 not_found */
	Q_FORBIDDEN,  /* an unsubscribe link that does not verify: 403, or 400 when
	               * its token is not even of the right length */
	Q_PATH,       /* the value is a path segment: 404 not_found */
};

struct qparam {
	const char *method;
	const char *prefix; /* the target up to the value */
	enum qcls cls;
	const char *field; /* what a 400/403/404 names: "" null, NULL unchecked */
	const char *auth;
	const char *wrap; /* the value is wrap + injection (k=v forms) */
	const char *body;
	int pad; /* the value is padded to this many bytes (a token's length) */
	int ref;   /* a REF: a ':' starts qualifiers, which these values break (400) */
};

/* clang-format off */
#define ZEROS_64 "0000000000000000000000000000000000000000000000000000000000000000"
#define CMP "/api/v1/compare?base=6.1-hx&target=6.2-hx&"
#define TREND "/api/v1/trend?machine=hx-m1&suite=hostile&metric=hx.throughput&"

static const struct qparam params[] = {
	{"GET", "/api/v1/runs?machine=", .cls = Q_EMPTY_LIST},
	{"GET", "/api/v1/runs?commit=", .cls = Q_EMPTY_LIST},
	{"GET", "/api/v1/runs?suite=", .cls = Q_EMPTY_LIST},
	{"GET", "/api/v1/runs?limit=", .cls = Q_INVALID, "limit"},
	{"GET", "/api/v1/runs?offset=", .cls = Q_INVALID, "offset"},
	{"GET", "/api/v1/commits?series=", .cls = Q_EMPTY_LIST},
	{"GET", "/api/v1/commits?branch=", .cls = Q_EMPTY_LIST},
	{"GET", "/api/v1/machines?name=", .cls = Q_EMPTY_LIST},
	{"GET", "/api/v1/tests?suite=", .cls = Q_EMPTY_LIST},
	{"GET", "/api/v1/metrics?metric=", .cls = Q_EMPTY_LIST},
	{"GET", "/api/v1/series?name=", .cls = Q_EMPTY_LIST},
	{"GET", "/api/v1/compare?target=6.2-hx&base=", .cls = Q_NOT_FOUND, "base", .ref = 1},
	{"GET", "/api/v1/compare?base=6.1-hx&target=", .cls = Q_NOT_FOUND, "target", .ref = 1},
	{"GET", CMP "suite=", .cls = Q_NO_ROWS},
	{"GET", CMP "machine=", .cls = Q_NO_ROWS},
	{"GET", CMP "metric=", .cls = Q_NO_ROWS},
	{"GET", CMP "params=", .cls = Q_INVALID, "params"},
	{"GET", CMP "variant=", .cls = Q_INVALID, "variant"},
	{"GET", CMP "params=", .cls = Q_NO_ROWS, .wrap = "nr_threads="},
	{"GET", CMP "variant=", .cls = Q_NO_ROWS, .wrap = "thp="},
	{"GET", CMP "significant=", .cls = Q_INVALID, "significant"},
	{"GET", CMP "format=", .cls = Q_INVALID, "format"},
	/* BUG (invalid UTF-8 row): the 400 message echoes the operand's bytes: not JSON */
	{"GET", CMP "format=mmtests&operand=", .cls = Q_INVALID, "operand"},
	{"GET", "/api/v1/trend?suite=hostile&metric=hx.throughput&machine=",
	 .cls = Q_NOT_FOUND, ""},
	{"GET", "/api/v1/trend?machine=hx-m1&metric=hx.throughput&suite=", .cls = Q_NOT_FOUND, ""},
	{"GET", "/api/v1/trend?machine=hx-m1&suite=hostile&metric=", .cls = Q_NOT_FOUND, "metric"},
	{"GET", TREND "params=", .cls = Q_INVALID, "params"},
	{"GET", TREND "variant=", .cls = Q_INVALID, "variant"},
	{"GET", TREND "params=", .cls = Q_NOT_FOUND, "", .wrap = "nr_threads="},
	{"GET", TREND "variant=", .cls = Q_NOT_FOUND, "", .wrap = "thp="},
	{"GET", "/api/v1/regressions?state=", .cls = Q_INVALID, "state"},
	{"GET", "/api/v1/regressions?verdict=", .cls = Q_INVALID, "verdict"},
	{"GET", "/api/v1/regressions?focus=", .cls = Q_INVALID, "focus"},
	{"GET", "/api/v1/regressions?since=", .cls = Q_INVALID, "since"},
	{"GET", "/api/v1/regressions?machine=", .cls = Q_EMPTY_LIST},
	{"GET", "/api/v1/regressions?suite=", .cls = Q_EMPTY_LIST},
	{"GET", "/api/v1/regressions?series=", .cls = Q_EMPTY_LIST},
	{"GET", "/api/v1/regressions?limit=", .cls = Q_INVALID, "limit"},
	{"GET", "/api/v1/regressions?offset=", .cls = Q_INVALID, "offset"},
	{"GET", "/api/v1/subscriptions?email=", .cls = Q_EMPTY_LIST, .auth = AUTH_ADMIN},
	{"GET", "/api/v1/alerts?state=", .cls = Q_EMPTY_LIST, .auth = AUTH_ADMIN},
	{"GET", "/api/v1/unsubscribe?t=" ZEROS_64 "&s=", .cls = Q_INVALID, "t"},
	{"POST", "/api/v1/unsubscribe?s=1&t=", .cls = Q_FORBIDDEN, "t", .pad = 32},
	{"POST", "/api/v1/unsubscribe?s=1&t=", .cls = Q_FORBIDDEN, "t", .pad = 64},
	{"GET", "/api/v1/runs/", .cls = Q_PATH, "run_id"},
	/* BUG (invalid UTF-8 row): the 404 message echoes the id's bytes: not JSON */
	{"GET", "/api/v1/regressions/", .cls = Q_PATH, "id"},
	{"GET", "/api/v1/series/", .cls = Q_PATH, "name"},
	{"DELETE", "/api/v1/runs/", .cls = Q_PATH, "run_id", AUTH_ADMIN},
	/* BUG (invalid UTF-8 row): as above */
	{"DELETE", "/api/v1/subscriptions/", .cls = Q_PATH, "id", AUTH_ADMIN},
	/* BUG (invalid UTF-8 row): as above */
	{"POST", "/api/v1/regressions/", .cls = Q_PATH, "id", AUTH_ADMIN,
	 .body = "{\"state\":\"fixed\"}"},
};
/* clang-format on */

/* a + b + c, malloc'd. */
static char *concat(const char *a, const char *b, const char *c)
{
	size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
	char *s = malloc(n);

	snprintf(s, n, "%s%s%s", a, b, c);
	return s;
}

static struct hexpect expect_for(const struct qparam *p, const struct injection *inj)
{
	struct hexpect e = {{200}, NULL, NULL};

	if (!inj->in_body) {
		/* not UTF-8: refused before or by PostgreSQL, never echoed */
		e.status[0] = 400;
		e.status[1] = p->cls == Q_PATH ? 404 : 0;
		e.code = p->cls == Q_INVALID ? "invalid" : "invalid|malformed|not_found";
		e.field = p->cls == Q_INVALID ? p->field : NULL;
		return e;
	}
	if (p->ref && strchr(inj->text, ':')) {
		e.status[0] = 400;
		e.code = "invalid";
		e.field = p->field;
		return e;
	}
	switch (p->cls) {
	case Q_EMPTY_LIST:
	case Q_NO_ROWS:
		break;
	case Q_INVALID:
		e.status[0] = 400;
		e.code = "invalid";
		e.field = p->field;
		break;
	case Q_FORBIDDEN:
		e.status[0] = 403;
		e.status[1] = 400;
		e.code = "forbidden|invalid";
		e.field = p->field;
		break;
	default:
		e.status[0] = 404;
		e.code = "not_found";
		e.field = p->field;
		break;
	}
	return e;
}

/* The answer's JSON value of key (a number or an array's size); -1 if none. */
static long answer_size(const struct resp *r, const char *key)
{
	json_t *j = json_loadb(r->body, r->len, 0, NULL), *v = json_object_get(j, key);
	long n = json_is_array(v)     ? (long)json_array_size(v)
	         : json_is_integer(v) ? (long)json_integer_value(v)
	                              : -1;

	json_decref(j);
	return n;
}

static void post(const char *target, const char *auth, json_t *doc)
{
	char *text = json_dumps(doc, JSON_COMPACT);
	struct hreq q = {.method = "POST",
	                 .target = target,
	                 .auth = auth,
	                 .content_type = JSON_CT,
	                 .body = text};
	struct resp r;

	hostile_send(&K, &q, &r);
	cr_assert_eq(r.status, 201, "seeding %s: %ld %s", target, r.status, r.body);
	resp_release(&r);
	free(text);
	json_decref(doc);
}

static void post_run(const char *run_id, const char *release, json_t *metrics, json_t *kernel)
{
	struct run_doc d = {
		.run_id = run_id,
		.machine = "hx-m1",
		.release = release,
		.kernel_more = kernel,
		.suite = "hostile",
		.params = json_pack("{s:s}", "nr_threads", "4"),
		.more = json_pack("{s:{s:s}}", "variant", "thp", "never"),
		.metrics = metrics,
	};

	post("/api/v1/runs", AUTH_COLLECTOR, harness_run_doc(&d));
}

Test(hostile, sql_in_query_parameters, .init = setup, .fini = teardown, .timeout = 300)
{
	size_t np = sizeof(params) / sizeof(params[0]);
	struct counts before, after;
	int nrows = 0;

	post_run("hx-base", "6.1-hx", json_pack("{s:[i,i,i]}", "hx.throughput", 1, 2, 3),
	         json_object());
	post_run("hx-target", "6.2-hx", json_pack("{s:[i,i,i]}", "hx.throughput", 2, 3, 4),
	         json_object());
	for (size_t pi = 0; pi < np; pi++) {
		const struct qparam *p = &params[pi];
		for (size_t ii = 0; ii < hostile_ninjections; ii++) {
			const struct injection *inj = &hostile_injections[ii];
			char value[600], name[1400], *esc, *target;
			struct hexpect e;
			struct hreq q = {.method = p->method,
			                 .auth = p->auth,
			                 .body = p->body,
			                 .content_type = p->body ? JSON_CT : NULL};
			struct resp r;

			if (!inj->in_query)
				continue;
			snprintf(value, sizeof(value), "%s%s%.*s", p->wrap ? p->wrap : "", inj->text,
			         p->pad, "________________________________________________________________");
			if (p->pad)
				value[p->pad] = '\0';
			esc = hostile_escape(value);
			target = concat(p->prefix, esc, "");
			q.target = target;
			snprintf(name, sizeof(name), "%s %s<%s%s>", p->method, p->prefix,
			         p->wrap ? p->wrap : "", inj->name);
			e = expect_for(p, inj);
			counts_take(db, &before);
			hostile_send(&K, &q, &r);
			if (hostile_check(name, &r, &e) && r.status == 200)
				cr_expect_eq(
				    answer_size(&r, p->cls == Q_NO_ROWS ? "rows" : "total"), 0,
				    "%s: matches something: %.300s", name, r.body);
			counts_take(db, &after);
			counts_expect(name, &before, &after, NULL);
			resp_release(&r);
			free(target);
			free(esc);
			nrows++;
		}
	}
	cr_log_info("hostile/query: %d rows", nrows);
	hostile_expect_healthy(&K, "after the query parameters");
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), 2);
}

/* A stored SQL-looking value, looked up by itself. */
struct proof {
	const char *path;  /* up to the value */
	const char *value; /* escaped and appended */
	const char *after; /* appended after it */
	const char *key;   /* "total", "rows", or NULL for a 200 alone */
	long want;
	const char *auth;
};

/* clang-format off */
#define BASE_Q "/api/v1/compare?base=%27OR%271%27%3D%271&target=%24%24%3BDROP_TABLE_run%3B%24%24"

static const struct proof proofs[] = {
	{"/api/v1/runs?commit=", "'OR'1'='1", "", .key = "total", .want = 1},
	{"/api/v1/runs?commit=", "$$;DROP_TABLE_run;$$", "", .key = "total", .want = 1},
	{"/api/v1/runs?machine=", "hx-m1' OR '1'='1", "", .key = "total", .want = 0},
	{"/api/v1/commits?series=", "'; DROP TABLE run; --", "", .key = "total", .want = 1},
	{"/api/v1/commits?series=", "'; DROP TABLE run; -- v1", "", .key = "total", .want = 1},
	{"/api/v1/commits?branch=", "1 OR 1=1", "", .key = "total", .want = 1},
	{"/api/v1/metrics?metric=", "$1", "", .key = "total", .want = 1},
	/* LIKE's wildcards are escaped */
	{"/api/v1/metrics?metric=", "%_%", "", .key = "total", .want = 1},
	{"/api/v1/metrics?metric=", "%", "", .key = "total", .want = 0},
	{"/api/v1/metrics?metric=", "_1", "", .key = "total", .want = 0},
	{"/api/v1/metrics?metric=", "*", "", .key = "total", .want = 3},
	{"/api/v1/series?name=", "'; DROP TABLE run; --", "", .key = "total", .want = 1},
	{"/api/v1/series/", "'; DROP TABLE run; --", "", .key = NULL},
	{"/api/v1/series/", "'; DROP TABLE run; -- v1", "", .key = NULL},
	{BASE_Q "&metric=", "*", "", .key = "rows", .want = 3},
	{BASE_Q "&metric=", "$1", "", .key = "rows", .want = 1},
	{BASE_Q "&metric=", "%_%", "", .key = "rows", .want = 1},
	{"/api/v1/trend?machine=hx-m1&suite=hostile&metric=", "$1", "", .key = NULL},
	{"/api/v1/subscriptions?email=", "$1@example.org", "", .key = "total", .want = 1,
	 AUTH_ADMIN},
	{"/api/v1/regressions?series=", "'; DROP TABLE run; --", "", .key = NULL},
};
/* clang-format on */

Test(hostile, sql_looking_values_are_found_exactly, .init = setup, .fini = teardown, .timeout = 120)
{
	size_t n = sizeof(proofs) / sizeof(proofs[0]);

	post_run("hx-proof-1", "'OR'1'='1",
	         json_pack("{s:[i,i,i], s:[i,i], s:[i]}", "hx.throughput", 1, 2, 3, "$1", 5, 6,
	                   "%_%", 7),
	         json_pack("{s:s, s:s, s:s}", "subject", "'; DROP TABLE run; --", "series",
	                   "'; DROP TABLE run; -- v1", "branch", "1 OR 1=1"));
	post_run("hx-proof-2", "$$;DROP_TABLE_run;$$",
	         json_pack("{s:[i,i,i], s:[i,i], s:[i]}", "hx.throughput", 2, 3, 4, "$1", 6, 7,
	                   "%_%", 8),
	         json_object());
	post("/api/v1/subscriptions", AUTH_ADMIN,
	     json_pack("{s:s, s:s}", "email", "$1@example.org", "series", "'; DROP TABLE run; --"));
	for (size_t i = 0; i < n; i++) {
		const struct proof *p = &proofs[i];
		char *esc = hostile_escape(p->value), name[600];
		char *target = concat(p->path, esc, p->after);
		struct hreq q = {.method = "GET", .auth = p->auth};
		struct hexpect e = {{200}, NULL, NULL};
		struct resp r;

		q.target = target;
		snprintf(name, sizeof(name), "stored value %s<%s>", p->path, p->value);
		hostile_send(&K, &q, &r);
		if (hostile_check(name, &r, &e) && p->key)
			cr_expect_eq(answer_size(&r, p->key), p->want,
			             "%s: %s should be %ld: %.300s", name, p->key, p->want, r.body);
		resp_release(&r);
		free(target);
		free(esc);
	}
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), 2);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM metric"), 3);
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM subscription"), 1);
	hostile_expect_healthy(&K, "after the stored values");
}

/* Post n runs of one trend key, each on a new release (a new commit). */
static void post_new_commits(int writer, int n)
{
	for (int i = 0; i < n; i++) {
		char body[400];
		struct hreq q = {.method = "POST",
		                 .target = "/api/v1/runs",
		                 .auth = AUTH_COLLECTOR,
		                 .content_type = JSON_CT,
		                 .body = body};
		struct resp r;

		snprintf(body, sizeof(body),
		         "{\"run_id\":\"hx-w%d-%d\",\"machine\":{\"name\":\"hx-m1\"},\"kernel\":"
		         "{\"release\":\"6.%d.%d-hx\"},\"variant\":{\"thp\":\"never\"},"
		         "\"test\":{\"suite\":\"hostile\",\"params\":{\"nr_threads\":\"4\"}},"
		         "\"metrics\":{\"hx.throughput\":[1,2]}}",
		         writer, i, writer, i);
		hostile_send(&K, &q, &r);
		resp_release(&r);
	}
}

/* Fixed bug, kept as a regression test: trend_load (server/trend.c) reads a key group's commits and its samples
 * in two statements; a run of a new commit committed in between leaves a
 * sample whose commit bsearch() does not find, and rank[NULL - base] is read:
 * kperfd dies with SIGSEGV. Public GET /api/v1/trend during ingest, and the
 * decision worker's change-point scan, both reach it. */
Test(hostile, trend_read_while_new_commits_arrive, .init = setup, .fini = teardown, .timeout = 120)
{
	enum { WRITERS = 2, RUNS = 300 };
	pid_t pid[WRITERS];
	int reads = 0, lost = 0, odd = 0, running = WRITERS;
	long odd_status = 0;

	post_run("hx-first", "6.0-hx", json_pack("{s:[i,i]}", "hx.throughput", 1, 2),
	         json_object());
	for (int w = 0; w < WRITERS; w++) {
		pid[w] = fork();
		cr_assert_neq(pid[w], -1);
		if (pid[w] == 0) {
			post_new_commits(w, RUNS);
			_exit(0);
		}
	}
	while (running && !lost) {
		struct hreq q = {.method = "GET",
		                 .target = "/api/v1/trend?machine=hx-m1&suite=hostile"
		                           "&metric=hx.throughput"};
		struct resp r;

		hostile_send(&K, &q, &r);
		lost = r.status == 0;
		if (r.status != 200 && !lost) {
			odd++;
			odd_status = r.status;
		}
		resp_release(&r);
		reads++;
		running = 0;
		for (int w = 0; w < WRITERS; w++)
			running += waitpid(pid[w], NULL, WNOHANG) == 0;
	}
	for (int w = 0; w < WRITERS; w++) {
		kill(pid[w], SIGTERM);
		waitpid(pid[w], NULL, 0);
	}
	cr_expect_eq(odd, 0, "%d of %d trend reads during ingest answered other than 200 (%ld)",
	             odd, reads, odd_status);
	cr_expect(!lost, "kperfd stopped answering after %d trend reads during ingest (see %s)",
	          reads, K.log);
	hostile_expect_healthy(&K, "after trend reads during ingest");
}
