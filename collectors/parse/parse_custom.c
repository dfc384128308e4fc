/*
 * parse_custom.c - any benchmark's own numbers, for benchmarks without a
 * parser: "kv" reads LKP's stats convention ("name: value" lines, '#'
 * comments and blank lines allowed, a repeated name a series of values) and
 * "json" a flat object of name -> number or list of numbers. Names are the
 * metric names as they are (write them "<program>.<key>"); anything else in
 * the input is an error naming its line or key, so nothing is half-read.
 */
#include <stdio.h>
#include <string.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/metrics.h"
#include "collectors/parse/parse.h"

struct counts {
	size_t values; /* all values added */
};

/* The ingest contract's name rule, checked rather than cleaned: 0, or -1 with msg set. */
static int check_name(const char *name, char *msg, size_t msgsz)
{
	size_t n = strlen(name);

	if (!n) {
		snprintf(msg, msgsz, "empty metric name");
		return -1;
	}
	if (n > METRIC_NAME_MAX) {
		snprintf(msg, msgsz, "metric name \"%.40s...\" is %zu characters long (at most %d)",
			 name, n, METRIC_NAME_MAX);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] <= ' ' || (unsigned char)name[i] >= 0x7f) {
			snprintf(msg, msgsz,
				 "metric name \"%.*s\": byte %zu is a %s (printable ASCII without "
				 "spaces only)",
				 (int)(n < 80 ? n : 80), name, i + 1,
				 name[i] == ' ' ? "space" : "control or non-ASCII byte");
			return -1;
		}
	return 0;
}

/* Append v to name within the limits; 0, or -1 with msg set (the name is the caller's to say). */
static int add(struct parse_ctx *pc, struct counts *c, const char *name, double v, char *msg,
	       size_t msgsz)
{
	json_t *m = parse_metrics(pc), *arr = json_object_get(m, name);

	if (!arr && json_object_size(m) >= PARSE_METRICS_MAX)
		snprintf(msg, msgsz, "more than %d metrics", PARSE_METRICS_MAX);
	else if (arr && json_array_size(arr) >= PARSE_VALUES_PER_METRIC_MAX)
		snprintf(msg, msgsz, "more than %d values", PARSE_VALUES_PER_METRIC_MAX);
	else if (c->values >= PARSE_VALUES_MAX)
		snprintf(msg, msgsz, "more than %d values in all", PARSE_VALUES_MAX);
	else if (metrics_add(m, name, v))
		snprintf(msg, msgsz, "not a finite number");
	else {
		c->values++;
		return 0;
	}
	return -1;
}

int parse_kv(struct parse_ctx *pc, const char *text, size_t len)
{
	struct counts c = {0};
	const char *nul = memchr(text, '\0', len);
	struct lines it;
	char *line, msg[400];
	int rc = 0;

	if (nul) {
		pc->line = 1;
		for (const char *p = text; p < nul; p++)
			pc->line += *p == '\n';
		return parse_fail(pc, "a NUL byte: not text");
	}
	lines_init(&it, text, len);
	while (!rc && (line = lines_next(&it))) {
		char *s = str_trim(line), *colon, *name, *val;
		double v;

		pc->line = it.no;
		if (!*s || *s == '#')
			continue;
		/* the last colon: a name may hold one, a number never */
		colon = strrchr(s, ':');
		if (!colon) {
			rc = parse_fail(pc, "expected \"name: value\", found \"%.80s\"", s);
			break;
		}
		*colon = '\0';
		name = str_trim(s);
		val = str_trim(colon + 1);
		if (check_name(name, msg, sizeof(msg)))
			rc = parse_fail(pc, "%s", msg);
		else if (!*val || cparse_double(val, &v))
			rc = parse_fail(pc, "\"%.80s\": value \"%.80s\" is not a number", name, val);
		else if (add(pc, &c, name, v, msg, sizeof(msg)))
			rc = parse_fail(pc, "\"%.80s\": %s", name, msg);
	}
	lines_release(&it);
	return rc;
}

/* A message about key, at the line of text where key is: -1. */
static int key_fail(struct parse_ctx *pc, const char *text, size_t len, const char *key,
		    const char *what)
{
	pc->line = parse_key_line(text, len, key);
	return parse_fail(pc, "key \"%.80s\": %s", key, what);
}

int parse_json(struct parse_ctx *pc, const char *text, size_t len)
{
	json_t *root = parse_load_json(pc, text, len, 1), *v, *x;
	struct counts c = {0};
	const char *key;
	char msg[400];
	int rc = 0;
	size_t i;

	if (!root)
		return -1;
	if (!json_is_object(root)) {
		json_decref(root);
		pc->line = 1;
		return parse_fail(pc, "expected an object of metric name -> number or list of "
				      "numbers");
	}
	json_object_foreach(root, key, v) {
		if (check_name(key, msg, sizeof(msg))) {
			rc = key_fail(pc, text, len, key, msg);
		} else if (json_is_number(v)) {
			if (add(pc, &c, key, json_number_value(v), msg, sizeof(msg)))
				rc = key_fail(pc, text, len, key, msg);
		} else if (!json_is_array(v)) {
			rc = key_fail(pc, text, len, key,
				      "expected a number or a list of numbers, not a string, object, "
				      "boolean or null");
		} else if (!json_array_size(v)) {
			rc = key_fail(pc, text, len, key, "an empty list (a metric needs a value)");
		} else {
			json_array_foreach(v, i, x) {
				if (!json_is_number(x))
					snprintf(msg, sizeof(msg), "element %zu is not a number", i);
				if (!json_is_number(x) ||
				    add(pc, &c, key, json_number_value(x), msg, sizeof(msg))) {
					rc = key_fail(pc, text, len, key, msg);
					break;
				}
			}
		}
		if (rc)
			break;
	}
	json_decref(root);
	return rc;
}
