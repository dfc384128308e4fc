/*
 * test_hostile_sql.c - SQL injection in every text field kperf stores: each
 * SQL-looking string of hostile_injections in each field (and map key) of a
 * run, of a commit and of a subscription. Where the contract admits the text
 * it is stored and read back byte-identical, which proves it reached SQL as
 * a parameter; where it does not, the answer is a 400 naming the exact
 * field. After each row the tables hold exactly what that row may add.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/harness.h"
#include "tests/integration/hostile.h"
#include "lib/kperf_limits.h"

static struct kperfd K;
static PGconn *db;
static int nrows;

static void setup(void)
{
	kperfd_start(&K, NULL);
	db = harness_db(&K);
}

static void teardown(void)
{
	PQfinish(db);
	kperfd_stop(&K);
}

/* What the contract admits in a field (DESIGN.md, api/openapi.yaml). */
enum cls {
	C_TEXT,      /* any UTF-8 without NUL, min..max bytes */
	C_PRINTABLE, /* printable ASCII without space, 1..max */
	C_NAME,      /* 1..max of A-Za-z0-9 and extra */
	C_SHA,       /* 40 hex digits */
	C_DATE,      /* ISO 8601 date-time */
	C_DIRECTION, /* higher, lower or none */
	C_EMAIL,     /* an address: one @, no space, quote, comma, <> or non-ASCII */
	C_ENUM,      /* one of a few words */
};

struct rule {
	enum cls cls;
	size_t min, max;
	const char *extra;
};

static int admits(const struct rule *r, const char *s, size_t n)
{
	const char *at;

	if (memchr(s, '\0', n))
		return 0;
	switch (r->cls) {
	case C_TEXT:
		return n >= r->min && n <= r->max;
	case C_PRINTABLE:
		return n <= r->max && hostile_printable(s, n);
	case C_NAME:
		return hostile_name(s, n, r->max, r->extra);
	case C_DIRECTION:
		return !strcmp(s, "higher") || !strcmp(s, "lower") || !strcmp(s, "none");
	case C_EMAIL:
		at = strchr(s, '@');
		if (n < 3 || n > 254 || !at || at == s || !at[1] || strchr(at + 1, '@'))
			return 0;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f ||
			    strchr("<>,\"", s[i]))
				return 0;
		return 1;
	default: /* no injection is a sha, a date or an enum word */
		return 0;
	}
}

/* clang-format off */
#define TEXT(max) {C_TEXT, 0, max, NULL}
#define TEXT1(max) {C_TEXT, 1, max, NULL}
#define PRINTABLE(max) {C_PRINTABLE, 1, max, NULL}
#define NAME(max, extra) {C_NAME, 1, max, extra}
#define RULE(c) {c, 0, 0, NULL}

/* A field: the injection is the value of key in the object at container
 * (dotted path, created when missing), or with key NULL a key of that object
 * holding fixed (JSON). in_array: the value goes in a one-element array. */
struct field {
	const char *container;
	const char *key;
	struct rule rule;
	const char *fixed;
	int in_array;
	int lax; /* the contract is silent: a 400 naming the field is right too */
};
static const struct field run_fields[] = {
	{"", "run_id", .rule = NAME(LIMIT_RUN_ID, "._:-")},
	{"machine", "name", .rule = NAME(LIMIT_MACHINE_NAME, "._-")},
	{"machine", "cpu_model", .rule = TEXT(LIMIT_TEXT)},
	{"machine.info", NULL, .rule = PRINTABLE(LIMIT_KEY), "\"v\""},
	{"machine.info", "k", .rule = TEXT(LIMIT_VALUE)},
	{"kernel", "commit", .rule = RULE(C_SHA)},
	{"kernel", "parent", .rule = RULE(C_SHA)},
	{"kernel", "subject", .rule = TEXT(LIMIT_TEXT)},
	{"kernel", "author", .rule = TEXT(LIMIT_TEXT)},
	{"kernel", "date", .rule = RULE(C_DATE)},
	{"kernel", "release", .rule = PRINTABLE(128)},
	{"kernel", "branch", .rule = TEXT(LIMIT_TEXT)},
	{"kernel", "describe", .rule = TEXT(LIMIT_TEXT)},
	{"kernel", "series", .rule = TEXT(LIMIT_TEXT)},
	{"kernel", "message_id", .rule = TEXT(LIMIT_TEXT)},
	{"kernel", "files", .rule = TEXT1(4096), .in_array = 1},
	{"kernel", "cmdline", .rule = TEXT(LIMIT_LONG_TEXT)},
	{"kernel.config", NULL, .rule = NAME(128, "_"), "\"y\""},
	{"kernel.config", "CONFIG_X", .rule = TEXT(LIMIT_VALUE)},
	{"variant", NULL, .rule = NAME(LIMIT_KEY, "._-"), "\"on\""},
	{"variant", "knob", .rule = TEXT(LIMIT_VALUE)},
	{"test", "suite", .rule = NAME(LIMIT_SUITE_NAME, "._-")},
	{"test.params", NULL, .rule = NAME(LIMIT_KEY, "._-"), "\"4\""},
	{"test.params", "test", .rule = TEXT(LIMIT_VALUE)},
	{"", "started_at", .rule = RULE(C_DATE)},
	{"", "command", .rule = TEXT(LIMIT_LONG_TEXT)},
	{"", "output_tail", .rule = TEXT(LIMIT_OUTPUT_TAIL)},
	{"environment", NULL, .rule = PRINTABLE(LIMIT_METRIC_NAME), "\"v\""},
	{"environment", "sysctl.vm.swappiness", .rule = TEXT(LIMIT_VALUE)},
	{"metrics", NULL, .rule = PRINTABLE(LIMIT_METRIC_NAME), "[7]"},
	{"units", NULL, .rule = PRINTABLE(LIMIT_METRIC_NAME), "\"KB/s\""},
	{"units", "hx.throughput", .rule = TEXT1(LIMIT_UNIT)},
	{"directions", NULL, .rule = PRINTABLE(LIMIT_METRIC_NAME), "\"higher\""},
	{"directions", "hx.throughput", .rule = RULE(C_DIRECTION)},
};

static const struct field commit_fields[] = {
	{"", "sha", .rule = RULE(C_SHA)},
	{"", "parent", .rule = RULE(C_SHA)},
	{"", "subject", .rule = TEXT(LIMIT_TEXT)},
	{"", "author", .rule = TEXT(LIMIT_TEXT)},
	{"", "date", .rule = RULE(C_DATE)},
	{"", "release", .rule = PRINTABLE(128)},
	{"", "branch", .rule = TEXT(LIMIT_TEXT)},
	{"", "describe", .rule = TEXT(LIMIT_TEXT)},
	{"", "series", .rule = TEXT(LIMIT_TEXT)},
	{"", "message_id", .rule = TEXT(LIMIT_TEXT)},
	{"", "files", .rule = TEXT1(4096), .in_array = 1},
};

/* Subscriptions are not in the ingest contract; these are kperfd's own rules.
 * email gets "@example.org" appended to the injection. */
static const struct field sub_fields[] = {
	{"", "email", .rule = RULE(C_EMAIL)},
	{"", "focus", .rule = RULE(C_ENUM)},
	{"", "series", .rule = TEXT1(LIMIT_TEXT)},
	{"", "suite", .rule = TEXT1(LIMIT_SUITE_NAME), .lax = 1},
	{"", "metric", .rule = TEXT1(LIMIT_METRIC_NAME)},
	{"", "machine", .rule = TEXT1(LIMIT_MACHINE_NAME), .lax = 1},
	{"", "delivery", .rule = RULE(C_ENUM)},
	{"", "files", .rule = TEXT1(4096), .in_array = 1},
	{"", "verdicts", .rule = RULE(C_ENUM), .in_array = 1},
};
/* clang-format on */

/* The object at a dotted path; created when create is set, else NULL if missing. */
static json_t *object_at(json_t *root, const char *path, int create)
{
	json_t *o = root;

	for (const char *p = path; *p && o;) {
		size_t n = strcspn(p, ".");
		char part[64];
		json_t *next;

		snprintf(part, sizeof(part), "%.*s", (int)n, p);
		next = json_object_get(o, part);
		if (!next && create) {
			next = json_object();
			json_object_set_new(o, part, next);
		}
		o = next;
		p += n + (p[n] == '.');
	}
	return o;
}

/* The field path kperfd names for f carrying inj; prefix goes first. */
static void field_path(char *out, size_t cap, const char *prefix, const struct field *f,
                       const struct injection *inj)
{
	const char *c = f->container;

	snprintf(out, cap, "%s%s%s%.*s%s", prefix, c, *c ? "." : "",
	         f->key ? (int)strlen(f->key) : (int)inj->len, f->key ? f->key : inj->text,
	         f->in_array ? "[0]" : "");
}

/* Put inj into doc at f; text overrides inj's bytes (email). */
static void put(json_t *doc, const struct field *f, const char *text, size_t len)
{
	json_t *o = object_at(doc, f->container, 1);
	json_t *v;

	if (!f->key) {
		char key[512];
		snprintf(key, sizeof(key), "%.*s", (int)len, text);
		json_object_set_new(o, key, json_loads(f->fixed, JSON_DECODE_ANY, NULL));
		return;
	}
	v = json_stringn(text, len);
	cr_assert_not_null(v);
	json_object_set_new(o, f->key, f->in_array ? json_pack("[o]", v) : v);
}

/* 1 when doc holds inj at f exactly as sent (bytes, or the key with its value). */
static int holds(json_t *doc, const struct field *f, const char *text, size_t len)
{
	json_t *o = object_at(doc, f->container, 0), *v, *fixed;
	char key[512];
	int ok;

	if (!f->key) {
		snprintf(key, sizeof(key), "%.*s", (int)len, text);
		fixed = json_loads(f->fixed, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL, NULL);
		ok = json_equal(json_object_get(o, key), fixed);
		json_decref(fixed);
		return ok;
	}
	v = json_object_get(o, f->key);
	if (f->in_array)
		v = json_array_get(v, 0);
	return json_is_string(v) && json_string_length(v) == len &&
	       !memcmp(json_string_value(v), text, len);
}

/* The expectation of one row; the 400 names field (or is malformed for NUL). */
static struct hexpect expect_for(const struct field *f, const struct injection *inj, int admitted,
                                 const char *field)
{
	struct hexpect e = {{400}, "invalid", field};

	if (admitted) {
		e.status[0] = 201;
		e.code = NULL;
		e.field = NULL;
	} else if (memchr(inj->text, '\0', inj->len)) {
		e.code = "malformed|invalid"; /* jansson refuses \u0000 before the contract does */
		e.field = NULL;
	}
	if (admitted && f->lax)
		e.status[1] = 400;
	return e;
}

static json_t *get_json(const char *target, const char *auth)
{
	struct hreq q = {.method = "GET", .target = target, .auth = auth};
	struct resp r;
	json_t *j;

	hostile_send(&K, &q, &r);
	j = r.status == 200 ? json_loadb(r.body, r.len, JSON_DECODE_INT_AS_REAL, NULL) : NULL;
	resp_release(&r);
	return j;
}

/* Post body (a JSON tree) and check everything about the row. Returns the
 * answer's JSON when the row was admitted and answered 201, else NULL. */
static json_t *post_row(const char *name, const char *target, const char *auth, json_t *body,
                        const struct hexpect *e, const long *delta_if_stored)
{
	struct counts before, after;
	char *text = json_dumps(body, JSON_COMPACT);
	struct hreq q = {.method = "POST",
	                 .target = target,
	                 .auth = auth,
	                 .content_type = JSON_CT,
	                 .body = text};
	struct resp r;
	json_t *answer = NULL;

	cr_assert_not_null(text, "%s: the body does not serialise", name);
	counts_take(db, &before);
	hostile_send(&K, &q, &r);
	hostile_check(name, &r, e);
	counts_take(db, &after);
	counts_expect(name, &before, &after, r.status == 201 ? delta_if_stored : NULL);
	if (r.status == 201)
		answer = json_loadb(r.body, r.len, JSON_DECODE_INT_AS_REAL, NULL);
	resp_release(&r);
	free(text);
	nrows++;
	return answer;
}

Test(hostile, sql_in_run_fields, .init = setup, .fini = teardown, .timeout = 300)
{
	long delta[CNT_N] = {1,         1, 2, ANY_DELTA, ANY_DELTA, ANY_DELTA, ANY_DELTA,
	                     ANY_DELTA, 0, 0, 0,         0,         0,         0};
	size_t nf = sizeof(run_fields) / sizeof(run_fields[0]);
	int n = 0, stored = 0;

	for (size_t fi = 0; fi < nf; fi++) {
		const struct field *f = &run_fields[fi];
		for (size_t ii = 0; ii < hostile_ninjections; ii++) {
			const struct injection *inj = &hostile_injections[ii];
			char name[1400], field[600], id[32], target[64];
			int admitted = admits(&f->rule, inj->text, inj->len);
			struct hexpect e;
			json_t *doc, *answer, *got;

			if (!inj->in_body || (!f->key && memchr(inj->text, '\0', inj->len)))
				continue;
			/* each run on a machine of its own: a new commit arriving in a key
			 * group being scanned is the trend_load race (test_hostile_query.c) */
			snprintf(id, sizeof(id), "hx-%d", n++);
			doc =
			    json_pack("{s:s, s:{s:s}, s:{s:s}, s:{s:s}, s:{s:[i,i]}}", "run_id", id,
			              "machine", "name", id, "kernel", "release", "6.1-hx", "test",
			              "suite", "hostile", "metrics", "hx.throughput", 1, 2);
			put(doc, f, inj->text, inj->len);
			field_path(field, sizeof(field), "", f, inj);
			snprintf(name, sizeof(name), "POST /api/v1/runs %s%s <- %s", field,
			         f->key ? "" : " (as a key)", inj->name);
			e = expect_for(f, inj, admitted, field);
			/* a new metric name brings its own sample */
			delta[CNT_SAMPLE] = !strcmp(f->container, "metrics") ? 3 : 2;
			answer = post_row(name, "/api/v1/runs", AUTH_COLLECTOR, doc, &e, delta);
			if (answer) {
				const char *run_id =
				    json_string_value(json_object_get(doc, "run_id"));
				char *esc = hostile_escape(run_id);
				stored++;
				snprintf(target, sizeof(target), "/api/v1/runs/%s", esc);
				free(esc);
				got = get_json(target, NULL);
				cr_expect(got && holds(got, f, inj->text, inj->len),
				          "%s: not read back byte-identical", name);
				json_decref(got);
			}
			json_decref(answer);
			json_decref(doc);
		}
	}
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM run"), stored,
	             "runs: the table holds other than the %d admitted runs", stored);
	cr_log_info("hostile/runs: %d rows, %d admitted", nrows, stored);
	hostile_expect_healthy(&K, "after the run fields");
}

/* A commit in the list of GET /api/v1/commits (target), by sha. */
static json_t *find_commit(const char *target, const char *sha, long *total)
{
	json_t *list = get_json(target, NULL), *item, *found = NULL;
	size_t i;

	*total = list ? (long)json_number_value(json_object_get(list, "total")) : -1;
	json_array_foreach(
	    json_object_get(list, "items"), i,
	    item) if (!found && !strcmp(json_string_value(json_object_get(item, "sha")) ?: "", sha))
	    found = json_incref(item);
	json_decref(list);
	return found;
}

Test(hostile, sql_in_commit_fields, .init = setup, .fini = teardown, .timeout = 300)
{
	static const long delta[CNT_N] = {[CNT_COMMITS] = 1};
	size_t nf = sizeof(commit_fields) / sizeof(commit_fields[0]);
	int n = 0, stored = 0;

	for (size_t fi = 0; fi < nf; fi++) {
		const struct field *f = &commit_fields[fi];
		for (size_t ii = 0; ii < hostile_ninjections; ii++) {
			const struct injection *inj = &hostile_injections[ii];
			char name[1400], field[600], sha[48], target[600];
			int admitted = admits(&f->rule, inj->text, inj->len);
			struct hexpect e;
			json_t *doc, *answer;

			if (!inj->in_body)
				continue;
			snprintf(sha, sizeof(sha), "%040x", 0xc0000 + n++);
			doc = json_pack("[{s:s}]", "sha", sha);
			put(json_array_get(doc, 0), f, inj->text, inj->len);
			field_path(field, sizeof(field), "[0].", f, inj);
			snprintf(name, sizeof(name), "POST /api/v1/commits %s <- %s", field + 4,
			         inj->name);
			e = expect_for(f, inj, admitted, field);
			answer = post_row(name, "/api/v1/commits", AUTH_COLLECTOR, doc, &e, delta);
			if (answer) {
				json_t *item;
				long total;
				char *esc = hostile_escape(inj->text);

				stored++;
				/* branch and series are query filters too: find it through them */
				if (!strcmp(f->key, "branch") || !strcmp(f->key, "series"))
					snprintf(target, sizeof(target), "/api/v1/commits?%s=%s",
					         f->key, esc);
				else
					snprintf(target, sizeof(target),
					         "/api/v1/commits?limit=1000");
				free(esc);
				item = find_commit(target, sha, &total);
				cr_expect(item && holds(item, f, inj->text, inj->len),
				          "%s: not read back byte-identical from %s", name, target);
				if (strcmp(target, "/api/v1/commits?limit=1000"))
					cr_expect_eq(total, 1, "%s: %s matches %ld commits", name,
					             target, total);
				json_decref(item);
			}
			json_decref(answer);
			json_decref(doc);
		}
	}
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM commits"), stored);
	cr_log_info("hostile/commits: %d rows, %d admitted", nrows, stored);
	hostile_expect_healthy(&K, "after the commit fields");
}

Test(hostile, sql_in_subscription_fields, .init = setup, .fini = teardown, .timeout = 300)
{
	static const long delta[CNT_N] = {[CNT_SUBSCRIPTION] = 1, [CNT_SUBSCRIPTION_ACTIVE] = 1};
	size_t nf = sizeof(sub_fields) / sizeof(sub_fields[0]);
	int stored = 0;

	for (size_t fi = 0; fi < nf; fi++) {
		const struct field *f = &sub_fields[fi];
		for (size_t ii = 0; ii < hostile_ninjections; ii++) {
			const struct injection *inj = &hostile_injections[ii];
			char name[1400], field[600], text[600];
			size_t len = inj->len;
			int admitted;
			struct hexpect e;
			json_t *doc, *answer;

			if (!inj->in_body)
				continue;
			memcpy(text, inj->text, len);
			if (!strcmp(f->key, "email")) {
				memcpy(text + len, "@example.org", 13);
				len += 12;
			}
			text[len] = '\0';
			admitted = admits(&f->rule, text, len);
			doc = json_pack("{s:s}", "email", "hx@example.org");
			put(doc, f, text, len);
			field_path(field, sizeof(field), "", f, inj);
			snprintf(name, sizeof(name), "POST /api/v1/subscriptions %s <- %s", field,
			         inj->name);
			e = expect_for(f, inj, admitted, field);
			answer =
			    post_row(name, "/api/v1/subscriptions", AUTH_ADMIN, doc, &e, delta);
			if (answer) {
				stored++;
				/* the answer is the row as read back from the database */
				cr_expect(holds(answer, f, text, len),
				          "%s: not stored byte-identical", name);
			}
			if (answer && !strcmp(f->key, "email")) {
				char *esc = hostile_escape(text), target[700];
				json_t *list;
				snprintf(target, sizeof(target), "/api/v1/subscriptions?email=%s",
				         esc);
				free(esc);
				list = get_json(target, AUTH_ADMIN);
				cr_expect_eq(json_number_value(json_object_get(list, "total")), 1,
				             "%s: %s does not find it alone", name, target);
				json_decref(list);
			}
			json_decref(answer);
			json_decref(doc);
		}
	}
	cr_expect_eq(harness_count(&K, "SELECT count(*) FROM subscription"), stored);
	cr_log_info("hostile/subscriptions: %d rows, %d admitted", nrows, stored);
	hostile_expect_healthy(&K, "after the subscription fields");
}
