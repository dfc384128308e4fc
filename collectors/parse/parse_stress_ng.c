/*
 * parse_stress_ng.c - stress-ng --metrics into stress-ng.<stressor>.* (LKP's
 * names where LKP has them): ops (bogo ops), ops_per_sec (real time),
 * ops_per_sec_usr_sys, real_time, usr_time, sys_time, max_rss_kb, and each
 * "miscellaneous metric" as <stressor>.<its unit words> (write64_mb_per_sec).
 * Reads either the --yaml file (it starts with "---") or the metrics table
 * stress-ng prints on stderr; both give the same names.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"

/* Longest stressor or metric name kept whole. */
#define SNG_NAME_MAX 160

/* The columns of the table and the keys of the YAML file, in the same order. */
static const struct {
	const char *yaml, *key, *unit, *direction;
} cols[] = {
	{"bogo-ops", "ops", "bogo ops", "higher"},
	{"wall-clock-time", "real_time", "s", "lower"},
	{"user-time", "usr_time", "s", "lower"},
	{"system-time", "sys_time", "s", "lower"},
	{"bogo-ops-per-second-real-time", "ops_per_sec", "bogo ops/s", "higher"},
	{"bogo-ops-per-second-usr-sys-time", "ops_per_sec_usr_sys", "bogo ops/s", "higher"},
	{"cpu-usage-per-instance", NULL, NULL, NULL}, /* (usr+sys)/real: redundant */
	{"max-rss", "max_rss_kb", "KB", "lower"},
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

static void put(struct parse_ctx *pc, const char *stressor, const char *key, double v,
		const char *unit, const char *direction)
{
	char name[2 * SNG_NAME_MAX + 8];

	snprintf(name, sizeof(name), "%s.%s", stressor, key);
	parse_metric_as(pc, name, v, unit, direction);
}

/* "nanosecs per context switch (pipe method)" or "nanosecs-per-context-switch-pipe-method"
 * -> "nanosecs_per_context_switch_pipe_method" (MB stays as the YAML spells it: mb). */
static void misc_name(const char *s, size_t n, char *out, size_t outsz)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < outsz; i++) {
		char ch = (char)tolower((unsigned char)s[i]);
		if (!isalnum((unsigned char)ch) && ch != '%')
			ch = '_';
		if (ch == '_' && (!o || out[o - 1] == '_'))
			continue;
		out[o++] = ch;
	}
	while (o && out[o - 1] == '_')
		o--;
	out[o] = '\0';
}

/* Rates are better high, times per operation low; anything else has no direction. */
static const char *misc_direction(const char *name)
{
	/* "nanosecs per context switch", "usecs per ...", "latency ..." */
	static const char *const lower[] = {"secs_per", "latency"};

	for (size_t i = 0; i < sizeof(lower) / sizeof(lower[0]); i++)
		if (strstr(name, lower[i]))
			return "lower";
	if (strstr(name, "per_sec") || strstr(name, "per_second"))
		return "higher";
	return NULL;
}

/* The unit the words name, where they name one plainly. */
static const char *misc_unit(const char *name)
{
	size_t n = strlen(name);

	if (n > 10 && !strcmp(name + n - 10, "mb_per_sec"))
		return "MB/s";
	if (!strncmp(name, "nanosecs_per", 12))
		return "ns";
	return NULL;
}

static void put_misc(struct parse_ctx *pc, const char *stressor, const char *name, double v)
{
	put(pc, stressor, name, v, misc_unit(name), misc_direction(name));
}

static int valid_stressor(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > SNG_NAME_MAX)
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("-_.", *s))
			return 0;
	return 1;
}

/* ---- the --yaml file ---- */

/* One "key: value" line of a stressor's entry; 0 or -1 with pc->err set. */
static int yaml_value(struct parse_ctx *pc, const char *stressor, const char *key,
		      const char *val)
{
	char name[SNG_NAME_MAX + 1];
	double v;
	size_t i;

	if (cparse_double(val, &v))
		return parse_fail(pc, "%s: %s: \"%s\" is not a number", stressor, key, val);
	for (i = 0; i < NCOLS && strcmp(key, cols[i].yaml); i++)
		;
	if (i < NCOLS) {
		if (cols[i].key)
			put(pc, stressor, cols[i].key, v, cols[i].unit, cols[i].direction);
		return 0;
	}
	misc_name(key, strlen(key), name, sizeof(name));
	if (!*name)
		return parse_fail(pc, "%s: bad metric name \"%s\"", stressor, key);
	put_misc(pc, stressor, name, v);
	return 0;
}

static int parse_yaml(struct parse_ctx *pc, const char *text, size_t len)
{
	char stressor[SNG_NAME_MAX + 1] = "";
	int in_metrics = 0, ended = 0, entries = 0, rc = 0;
	struct lines it;
	char *line;

	lines_init(&it, text, len);
	while (!rc && !ended && (line = lines_next(&it))) {
		int top = !isspace((unsigned char)line[0]);
		char *s = str_trim(line), *colon, *key, *val;

		pc->line = it.no;
		if (!*s || s[0] == '#' || !strcmp(s, "---"))
			continue;
		if (!strcmp(s, "...")) {
			ended = 1;
		} else if (top) {
			/* a top-level key: "metrics:" opens the list, any other closes it */
			in_metrics = !strcmp(s, "metrics:");
		} else if (!in_metrics) {
			continue;
		} else if (!(colon = strchr(s, ':'))) {
			rc = parse_fail(pc, "expected \"key: value\" in the metrics list");
		} else {
			*colon = '\0';
			key = str_trim(s);
			val = str_trim(colon + 1);
			if (!strncmp(key, "- ", 2)) {
				key = str_trim(key + 2);
				if (strcmp(key, "stressor") || !valid_stressor(val)) {
					rc = parse_fail(pc, "expected \"- stressor: NAME\"");
				} else {
					snprintf(stressor, sizeof(stressor), "%s", val);
					entries++;
				}
			} else if (!*stressor) {
				rc = parse_fail(pc, "\"%s\" before the first \"- stressor:\"", key);
			} else {
				rc = yaml_value(pc, stressor, key, val);
			}
		}
	}
	lines_release(&it);
	if (!rc && entries && !ended)
		rc = parse_fail(pc, "the YAML document ends without \"...\": truncated output?");
	return rc;
}

/* ---- the table on stderr ---- */

/* The text after "stress-ng: <level>: [pid] ", or NULL when line has no such prefix. */
static char *body_of(char *line)
{
	char *p = strstr(line, "stress-ng: ");
	char *b;

	if (!p)
		return NULL;
	b = strchr(p + 11, '[');
	if (!b || !(b = strchr(b, ']')))
		return NULL;
	return b + 1;
}

/* Cut " (geometric mean of 2 instances)" and the like off the end of s. */
static void cut_mean(char *s)
{
	static const char *const kinds[] = {" (average", " (geometic mean", " (geometric mean",
					    " (harmonic mean", " (total"};
	char *cut = NULL;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		char *q = s;
		while ((q = strstr(q, kinds[i]))) {
			if (!cut || q > cut)
				cut = q;
			q++;
		}
	}
	if (cut)
		*cut = '\0';
}

static int table_row(struct parse_ctx *pc, char *body)
{
	char *f[16];
	size_t nf = split_ws(body, f, 16);
	double v[NCOLS];

	if ((nf != 7 && nf != 9) || !valid_stressor(f[0]))
		return 1;
	for (size_t i = 1; i < nf; i++)
		if (cparse_double(f[i], &v[i - 1]))
			return parse_fail(pc, "%s: column %zu, \"%s\", is not a number", f[0], i + 1,
					  f[i]);
	for (size_t i = 0; i + 1 < nf; i++) {
		/* 7 fields: the table of stress-ng before 0.14 (no CPU%, RSS) */
		if (cols[i].key)
			put(pc, f[0], cols[i].key, v[i], cols[i].unit, cols[i].direction);
	}
	return 0;
}

static int misc_row(struct parse_ctx *pc, char *body)
{
	char name[SNG_NAME_MAX + 1], *f[3], *rest, *end;
	double v;

	cut_mean(body);
	end = body + strlen(body);
	if (split_ws(body, f, 2) < 2 || f[1] + strlen(f[1]) >= end)
		return 1;
	rest = str_trim(f[1] + strlen(f[1]) + 1);
	if (!valid_stressor(f[0]) || cparse_double(f[1], &v) || !*rest)
		return 1;
	misc_name(rest, strlen(rest), name, sizeof(name));
	if (!*name)
		return 1;
	put_misc(pc, f[0], name, v);
	return 0;
}

static int parse_table(struct parse_ctx *pc, const char *text, size_t len)
{
	enum { T_NONE, T_HEAD, T_ROWS, T_MISC } st = T_NONE;
	int table = 0, done = 0, rc = 0;
	struct lines it;
	char *line;

	lines_init(&it, text, len);
	while (!rc && (line = lines_next(&it))) {
		/* --log-brief drops the "stress-ng: info:  [pid]" prefix */
		char *body = body_of(line) ? body_of(line) : line;

		pc->line = it.no;
		if (strstr(body, " run completed in ")) {
			done = 1;
			st = T_NONE;
		} else if (strstr(body, "bogo ops") && strstr(body, "real time")) {
			st = T_HEAD;
			table = 1;
		} else if (st == T_HEAD && strstr(body, "(secs)")) {
			st = T_ROWS;
		} else if (strstr(body, "miscellaneous metrics:")) {
			st = T_MISC;
		} else if (st == T_ROWS) {
			rc = table_row(pc, body);
			if (rc == 1)
				rc = 0, st = T_NONE;
		} else if (st == T_MISC) {
			if (misc_row(pc, body))
				st = T_NONE;
		}
	}
	lines_release(&it);
	if (!rc && table && !done)
		rc = parse_fail(pc, "no \"run completed\" line after the metrics table: truncated "
				    "output?");
	return rc;
}

int parse_stress_ng(struct parse_ctx *pc, const char *text, size_t len)
{
	size_t i = 0;

	while (i < len && isspace((unsigned char)text[i]))
		i++;
	if (len - i >= 3 && !memcmp(text + i, "---", 3))
		return parse_yaml(pc, text, len);
	return parse_table(pc, text, len);
}
