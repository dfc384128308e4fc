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

#include "jsonw.h"
#include "limits.h"
#include "util.h"
#include "ingest_decode.h"

struct path {
	char s[DECODE_FIELD_MAX];
	size_t len;
};

struct ctx {
	struct path path;
	struct decode_error *err;
	json_t *ignored;
	size_t nvalues;
};

/* After a cut, drop a UTF-8 sequence left incomplete at the end. */
static void path_trim_utf8(struct path *p)
{
	size_t i = p->len;
	while (i > 0 && ((unsigned char)p->s[i - 1] & 0xc0) == 0x80)
		i--;
	if (i > 0 && (unsigned char)p->s[i - 1] >= 0xc0) {
		size_t need = (unsigned char)p->s[i - 1] >= 0xf0   ? 4
			      : (unsigned char)p->s[i - 1] >= 0xe0 ? 3
								   : 2;
		if (p->len - (i - 1) < need)
			p->len = i - 1;
	}
	p->s[p->len] = '\0';
}

static size_t path_push_key(struct path *p, const char *key)
{
	size_t old = p->len;
	int n = snprintf(p->s + p->len, sizeof(p->s) - p->len, "%s%s", p->len ? "." : "", key);
	if (n > 0 && (size_t)n < sizeof(p->s) - p->len) {
		p->len += (size_t)n;
	} else if (n > 0) {
		p->len = sizeof(p->s) - 1;
		path_trim_utf8(p);
	}
	return old;
}

static size_t path_push_index(struct path *p, size_t i)
{
	size_t old = p->len;
	int n = snprintf(p->s + p->len, sizeof(p->s) - p->len, "[%zu]", i);
	if (n > 0)
		p->len += (size_t)n < sizeof(p->s) - p->len ? (size_t)n : sizeof(p->s) - p->len - 1;
	return old;
}

static void path_pop(struct path *p, size_t old)
{
	p->len = old;
	p->s[old] = '\0';
}

static int fail(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	c->err->status = 400;
	c->err->code = "invalid";
	snprintf(c->err->field, sizeof(c->err->field), "%s", c->path.s);
	va_start(ap, fmt);
	vsnprintf(c->err->message, sizeof(c->err->message), fmt, ap);
	va_end(ap);
	return -1;
}

static void malformed(struct decode_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void malformed(struct decode_error *err, const char *fmt, ...)
{
	va_list ap;

	err->status = 400;
	err->code = "malformed";
	err->field[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
}

/*
 * Find nesting deeper than LIMIT_JSON_DEPTH before jansson recurses into it,
 * and count the values (commas and containers) before jansson allocates
 * them: decoding costs ~60 bytes per value, so a 4 MiB body of "[0,0,...]"
 * would take 120 MB. Strings are skipped so brackets inside them do not count.
 */
static int depth_scan(const char *s, size_t len, struct decode_error *err)
{
	int depth = 0, in_str = 0, esc = 0;
	size_t line = 1, col = 0, values = 1;

	for (size_t i = 0; i < len; i++) {
		char ch = s[i];
		col++;
		if (ch == '\n') {
			line++;
			col = 0;
		}
		if (in_str) {
			if (esc)
				esc = 0;
			else if (ch == '\\')
				esc = 1;
			else if (ch == '"')
				in_str = 0;
			continue;
		}
		if (ch == '"') {
			in_str = 1;
		} else if (ch == ',') {
			values++;
		} else if (ch == '[' || ch == '{') {
			values++;
			if (++depth > LIMIT_JSON_DEPTH) {
				malformed(err, "nesting deeper than %d levels at line %zu, column %zu",
					  LIMIT_JSON_DEPTH, line, col);
				return -1;
			}
		} else if (ch == ']' || ch == '}') {
			depth--;
		}
	}
	if (values > LIMIT_REQUEST_VALUES) {
		err->status = 413;
		err->code = "too_large";
		snprintf(err->message, sizeof(err->message),
			 "the body holds about %zu values; the limit is %d per request", values,
			 LIMIT_REQUEST_VALUES);
		return -1;
	}
	return 0;
}

static json_t *parse(const char *body, size_t len, struct decode_error *err)
{
	json_error_t je;
	json_t *root;

	if (depth_scan(body, len, err))
		return NULL;
	root = json_loadb(body, len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, &je);
	if (!root) {
		malformed(err, "line %d, column %d: %s", je.line, je.column, je.text);
		return NULL;
	}
	return root;
}

/* ---- small value checks ---- */

static int is_name_char(int ch, const char *extra)
{
	return isalnum(ch) || (ch && strchr(extra, ch));
}

static int check_pattern(const char *s, size_t max, const char *extra)
{
	size_t n = strlen(s);
	if (n < 1 || n > max)
		return -1;
	for (; *s; s++)
		if (!is_name_char((unsigned char)*s, extra))
			return -1;
	return 0;
}

static int check_printable(const char *s, size_t min, size_t max)
{
	size_t n = strlen(s);
	if (n < min || n > max)
		return -1;
	for (; *s; s++)
		if ((unsigned char)*s <= 0x20 || (unsigned char)*s >= 0x7f)
			return -1;
	return 0;
}

static int check_hex40(const char *s)
{
	if (strlen(s) != 40)
		return -1;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return -1;
	return 0;
}

static int digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

int iso8601_check(const char *s)
{
	static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	int y, mo, d, h, mi, sec, oh, om;

	if (strlen(s) < 19 || digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) ||
	    s[7] != '-' || digits(s + 8, 2, &d) || (s[10] != 'T' && s[10] != ' ') ||
	    digits(s + 11, 2, &h) || s[13] != ':' || digits(s + 14, 2, &mi) || s[16] != ':' ||
	    digits(s + 17, 2, &sec))
		return -1;
	if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 ||
	    mi > 59 || sec > 60)
		return -1;
	if (mo == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return -1;
	s += 19;
	if (*s == '.') {
		int nd = 0;
		for (s++; isdigit((unsigned char)*s); s++)
			nd++;
		if (nd < 1 || nd > 9)
			return -1;
	}
	if (*s == 'Z' && s[1] == '\0')
		return 0;
	if ((*s == '+' || *s == '-') && strlen(s) == 6 && !digits(s + 1, 2, &oh) && s[3] == ':' &&
	    !digits(s + 4, 2, &om) && oh <= 23 && om <= 59)
		return 0;
	return -1;
}

/* ---- typed field getters; each names the path on failure ---- */

static int want_string(struct ctx *c, json_t *v, size_t min, size_t max, const char **out)
{
	if (!json_is_string(v))
		return fail(c, "must be a string");
	if (json_string_length(v) != strlen(json_string_value(v)))
		return fail(c, "must not contain NUL characters");
	if (json_string_length(v) < min)
		return fail(c, "must not be empty");
	if (json_string_length(v) > max)
		return fail(c, "longer than %zu bytes", max);
	*out = json_string_value(v);
	return 0;
}

static int want_integer(struct ctx *c, json_t *v, double min, double max)
{
	double d;
	if (!json_is_number(v))
		return fail(c, "must be a number");
	d = json_number_value(v);
	if (d != floor(d) || d < min || d > max)
		return fail(c, "must be an integer from %.0f to %.0f", min, max);
	return 0;
}

typedef int (*field_fn)(struct ctx *c, json_t *v);

struct field {
	const char *key;
	field_fn check;
};

/*
 * Walk an object's keys: known ones are checked, unknown ones removed and
 * listed in ignored. Keys in required must be present.
 */
static int check_object(struct ctx *c, json_t *obj, const struct field *fields,
			const char *const *required)
{
	const char *key;
	json_t *val;
	void *tmp;

	if (!json_is_object(obj))
		return fail(c, "must be an object");
	json_object_foreach_safe(obj, tmp, key, val) {
		const struct field *f = fields;
		size_t old;
		int rc = 0;

		while (f->key && strcmp(f->key, key))
			f++;
		old = path_push_key(&c->path, key);
		if (!f->key) {
			if (json_array_size(c->ignored) < DECODE_IGNORED_MAX)
				json_array_append_new(c->ignored, json_string(c->path.s));
			json_object_del(obj, key);
		} else {
			rc = f->check(c, val);
		}
		path_pop(&c->path, old);
		if (rc)
			return rc;
	}
	for (; required && *required; required++) {
		if (!json_object_get(obj, *required)) {
			size_t old = path_push_key(&c->path, *required);
			int rc = fail(c, "is required");
			path_pop(&c->path, old);
			return rc;
		}
	}
	return 0;
}

/* A map of name -> scalar (string, number or boolean), names by pattern. */
static int check_map(struct ctx *c, json_t *v, size_t keymax, const char *extra, int strings_only)
{
	const char *key;
	json_t *val;

	if (!json_is_object(v))
		return fail(c, "must be an object");
	if (json_object_size(v) > LIMIT_MAP_KEYS)
		return fail(c, "more than %d keys", LIMIT_MAP_KEYS);
	json_object_foreach(v, key, val) {
		size_t old = path_push_key(&c->path, key);
		const char *s;
		int rc = 0;

		if (extra && check_pattern(key, keymax, extra))
			rc = fail(c, "key must be 1-%zu of A-Za-z0-9%s", keymax, extra);
		else if (!extra && check_printable(key, 1, keymax))
			rc = fail(c, "key must be 1-%zu printable characters without spaces", keymax);
		else if (json_is_string(val))
			rc = want_string(c, val, 0, LIMIT_VALUE, &s);
		else if (strings_only || !(json_is_number(val) || json_is_boolean(val)))
			rc = fail(c, strings_only ? "must be a string" : "must be a string, number or boolean");
		path_pop(&c->path, old);
		if (rc)
			return rc;
	}
	return 0;
}

/* A canonical copy of a map: every value as a string, for trend keys. */
static char *canonical_map(json_t *v)
{
	json_t *out = json_object();
	const char *key;
	json_t *val;
	char *s;

	json_object_foreach(v, key, val) {
		if (json_is_string(val)) {
			json_object_set(out, key, val);
		} else if (json_is_number(val)) {
			struct buf b = BUF_INIT;
			jsonw_double(&b, json_number_value(val));
			json_object_set_new(out, key, json_string(buf_str(&b)));
			buf_release(&b);
		} else {
			json_object_set_new(out, key, json_string(json_is_true(val) ? "true" : "false"));
		}
	}
	s = jsonw_dump(out, 1);
	json_decref(out);
	return s;
}

/* ---- field checkers ---- */

static int f_run_id(struct ctx *c, json_t *v)
{
	const char *s;
	if (want_string(c, v, 1, LIMIT_RUN_ID, &s))
		return -1;
	if (check_pattern(s, LIMIT_RUN_ID, "._:-"))
		return fail(c, "must be 1-%d of A-Za-z0-9._:-", LIMIT_RUN_ID);
	return 0;
}

static int f_text(struct ctx *c, json_t *v)
{
	const char *s;
	return want_string(c, v, 0, LIMIT_TEXT, &s);
}

static int f_long_text(struct ctx *c, json_t *v)
{
	const char *s;
	return want_string(c, v, 0, LIMIT_LONG_TEXT, &s);
}

static int f_output_tail(struct ctx *c, json_t *v)
{
	const char *s;
	return want_string(c, v, 0, LIMIT_OUTPUT_TAIL, &s);
}

static int f_count(struct ctx *c, json_t *v)
{
	return want_integer(c, v, 0, 1048576);
}

static int f_memory(struct ctx *c, json_t *v)
{
	return want_integer(c, v, 0, 1099511627776.0);
}

static int f_exit_status(struct ctx *c, json_t *v)
{
	return want_integer(c, v, -2147483648.0, 2147483647.0);
}

static int f_duration(struct ctx *c, json_t *v)
{
	if (!json_is_number(v) || json_number_value(v) < 0)
		return fail(c, "must be a number of seconds >= 0");
	return 0;
}

static int f_date(struct ctx *c, json_t *v)
{
	const char *s;
	if (want_string(c, v, 1, 64, &s))
		return -1;
	if (iso8601_check(s))
		return fail(c, "must be an ISO 8601 date-time such as 2020-06-16T10:00:00Z");
	return 0;
}

static int f_machine_name(struct ctx *c, json_t *v)
{
	const char *s;
	if (want_string(c, v, 1, LIMIT_MACHINE_NAME, &s))
		return -1;
	if (check_pattern(s, LIMIT_MACHINE_NAME, "._-"))
		return fail(c, "must be 1-%d of A-Za-z0-9._-", LIMIT_MACHINE_NAME);
	return 0;
}

static int f_info(struct ctx *c, json_t *v)
{
	return check_map(c, v, LIMIT_KEY, NULL, 0);
}

static int f_machine(struct ctx *c, json_t *v)
{
	static const struct field fields[] = {
		{"name", f_machine_name}, {"cpu_model", f_text},  {"nr_cpus", f_count},
		{"sockets", f_count},      {"memory_mb", f_memory}, {"numa_nodes", f_count},
		{"info", f_info},          {NULL, NULL}};
	static const char *const required[] = {"name", NULL};
	return check_object(c, v, fields, required);
}

static int f_sha(struct ctx *c, json_t *v)
{
	if (!json_is_string(v) || check_hex40(json_string_value(v)))
		return fail(c, "must be a full commit sha of 40 hex digits");
	return 0;
}

static int f_release(struct ctx *c, json_t *v)
{
	const char *s;
	if (want_string(c, v, 1, 128, &s))
		return -1;
	if (check_printable(s, 1, 128))
		return fail(c, "must be 1-128 printable characters without spaces");
	return 0;
}

static int f_files(struct ctx *c, json_t *v)
{
	size_t i;
	json_t *f;

	if (!json_is_array(v))
		return fail(c, "must be an array of file paths");
	if (json_array_size(v) > LIMIT_FILES)
		return fail(c, "more than %d files", LIMIT_FILES);
	json_array_foreach(v, i, f) {
		size_t old = path_push_index(&c->path, i);
		const char *s;
		int rc = want_string(c, f, 1, 4096, &s);
		path_pop(&c->path, old);
		if (rc)
			return rc;
	}
	return 0;
}

static int f_config(struct ctx *c, json_t *v)
{
	return check_map(c, v, 128, "_", 1);
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
	if (check_object(c, v, fields, NULL))
		return -1;
	if (!json_object_get(v, "commit") && !json_object_get(v, "release"))
		return fail(c, "needs commit (40 hex digits) or release");
	return 0;
}

static int f_params(struct ctx *c, json_t *v)
{
	return check_map(c, v, LIMIT_KEY, "._-", 0);
}

static int f_suite(struct ctx *c, json_t *v)
{
	const char *s;
	if (want_string(c, v, 1, LIMIT_SUITE_NAME, &s))
		return -1;
	if (check_pattern(s, LIMIT_SUITE_NAME, "._-"))
		return fail(c, "must be 1-%d of A-Za-z0-9._-", LIMIT_SUITE_NAME);
	return 0;
}

static int f_test(struct ctx *c, json_t *v)
{
	static const struct field fields[] = {
		{"suite", f_suite}, {"params", f_params}, {NULL, NULL}};
	static const char *const required[] = {"suite", NULL};
	return check_object(c, v, fields, required);
}

static int f_environment(struct ctx *c, json_t *v)
{
	return check_map(c, v, LIMIT_METRIC_NAME, NULL, 0);
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
		return fail(c, "must be a number or an array of numbers");
	n = json_array_size(v);
	if (n == 0)
		return fail(c, "must hold at least one value");
	if (n > LIMIT_VALUES_PER_METRIC)
		return fail(c, "more than %d values", LIMIT_VALUES_PER_METRIC);
	json_array_foreach(v, i, x) {
		if (!json_is_number(x)) {
			size_t old = path_push_index(&c->path, i);
			int rc = fail(c, "must be a finite number");
			path_pop(&c->path, old);
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
		return fail(c, "must be an object of metric name to values");
	if (json_object_size(v) == 0)
		return fail(c, "must hold at least one metric");
	if (json_object_size(v) > LIMIT_METRICS_PER_RUN)
		return fail(c, "more than %d metrics", LIMIT_METRICS_PER_RUN);
	json_object_foreach(v, key, val) {
		size_t old = path_push_key(&c->path, key);
		int rc = 0;

		if (check_printable(key, 1, LIMIT_METRIC_NAME))
			rc = fail(c, "name must be 1-%d printable ASCII characters without spaces",
				  LIMIT_METRIC_NAME);
		else
			rc = f_metric_values(c, val);
		if (!rc && c->nvalues > LIMIT_VALUES_PER_RUN)
			rc = fail(c, "run holds more than %d values", LIMIT_VALUES_PER_RUN);
		path_pop(&c->path, old);
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
		return fail(c, "must be an object keyed by metric name");
	json_object_foreach(v, key, val) {
		size_t old = path_push_key(&c->path, key);
		const char *s = NULL;
		int rc = 0;

		if (check_printable(key, 1, LIMIT_METRIC_NAME))
			rc = fail(c, "key must be a metric name: 1-%d printable ASCII characters",
				  LIMIT_METRIC_NAME);
		else if (directions) {
			if (!json_is_string(val) ||
			    (strcmp(json_string_value(val), "higher") &&
			     strcmp(json_string_value(val), "lower") &&
			     strcmp(json_string_value(val), "none")))
				rc = fail(c, "must be \"higher\", \"lower\" or \"none\"");
		} else {
			rc = want_string(c, val, 1, LIMIT_UNIT, &s);
		}
		path_pop(&c->path, old);
		if (rc)
			return rc;
	}
	return 0;
}

static int f_job_id(struct ctx *c, json_t *v)
{
	return want_integer(c, v, 1, 9007199254740991.0);
}

/* "job": {"id": N}: the run counts toward job N (POST /api/v1/jobs). */
static int f_job(struct ctx *c, json_t *v)
{
	static const struct field fields[] = {{"id", f_job_id}, {NULL, NULL}};
	static const char *const required[] = {"id", NULL};
	return check_object(c, v, fields, required);
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
		{NULL, NULL}};
	static const char *const required[] = {"run_id", "machine", "kernel", "test", "metrics",
					       NULL};
	json_t *empty;
	size_t old;

	c->nvalues = 0;
	if (check_object(c, run, fields, required))
		return -1;
	if (json_object_get(run, "units")) {
		old = path_push_key(&c->path, "units");
		if (check_per_metric(c, json_object_get(run, "units"), 0))
			return -1;
		path_pop(&c->path, old);
	}
	if (json_object_get(run, "directions")) {
		old = path_push_key(&c->path, "directions");
		if (check_per_metric(c, json_object_get(run, "directions"), 1))
			return -1;
		path_pop(&c->path, old);
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
	out->params = canonical_map(json_object_get(json_object_get(run, "test"), "params")
					    ?: empty);
	out->variant = canonical_map(json_object_get(run, "variant") ?: empty);
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
		path_push_key(&c.path, field);
	rc = copy ? check_object(&c, copy, want_variant ? with_variant : test_only, required)
		  : fail(&c, "must be an object");
	if (!rc) {
		*params = canonical_map(json_object_get(copy, "params") ?: empty);
		if (variant)
			*variant = canonical_map(json_object_get(copy, "variant") ?: empty);
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
	in->root = parse(body, len, err);
	if (!in->root)
		goto fail;
	if (!json_is_object(in->root)) {
		fail(&c, "must be a run object or {\"runs\": [...]}");
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
	path_push_key(&c.path, "runs");
	if (!json_is_array(runs) || json_array_size(runs) == 0) {
		fail(&c, "must be a non-empty array of runs");
		goto fail;
	}
	if (json_array_size(runs) > LIMIT_RUNS_PER_BATCH) {
		fail(&c, "more than %d runs in one batch", LIMIT_RUNS_PER_BATCH);
		goto fail;
	}
	in->nruns = json_array_size(runs);
	in->runs = xcalloc(in->nruns, sizeof(*in->runs));
	for (size_t i = 0; i < in->nruns; i++) {
		size_t old = path_push_index(&c.path, i);
		if (decode_run(&c, json_array_get(runs, i), &in->runs[i]))
			goto fail;
		path_pop(&c.path, old);
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(in->runs[j].run_id, in->runs[i].run_id)) {
				path_push_index(&c.path, i);
				path_push_key(&c.path, "run_id");
				fail(&c, "repeats the run_id of runs[%zu]", j);
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
	in->root = parse(body, len, err);
	if (!in->root)
		goto fail;
	list = in->root;
	if (json_is_object(list)) {
		path_push_key(&c.path, "commits");
		list = json_object_get(list, "commits");
	}
	if (!json_is_array(list) || json_array_size(list) == 0) {
		fail(&c, "must be a non-empty array of commits");
		goto fail;
	}
	if (json_array_size(list) > LIMIT_COMMITS_PER_POST) {
		fail(&c, "more than %d commits", LIMIT_COMMITS_PER_POST);
		goto fail;
	}
	in->ncommits = json_array_size(list);
	in->commits = xcalloc(in->ncommits, sizeof(*in->commits));
	for (i = 0; i < in->ncommits; i++) {
		size_t old = path_push_index(&c.path, i);
		json_t *obj = json_array_get(list, i);
		if (check_object(&c, obj, fields, required))
			goto fail;
		in->commits[i] = jsonw_dump(obj, 0);
		path_pop(&c.path, old);
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
