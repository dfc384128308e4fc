/*
 * parse_redis_benchmark.c - redis-benchmark --csv into
 * redis-benchmark.<test>.<column>: rps (requests/s) and the latency columns
 * of redis-benchmark 6.2+ (avg_latency_ms, min_, p50_, p95_, p99_, max_),
 * named by its header row; the two-column CSV of older versions gives rps.
 * Test names are cleaned: "LRANGE_100 (first 100 elements)" becomes
 * LRANGE_100_first_100_elements.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"

#define RB_COLS 16
/* Longest test name kept (a custom command's test name is its command line). */
#define RB_NAME_MAX 128

/*
 * Split a CSV line of double-quoted fields in place ("a","b" with "" for a
 * quote); returns the field count, or -1 when a quote is left open or a
 * field is not quoted.
 */
static int split_csv(char *s, char **f, int max)
{
	int n = 0;

	while (*s) {
		char *o;
		if (*s != '"' || n == max)
			return -1;
		f[n++] = o = ++s;
		for (;;) {
			if (!*s)
				return -1;
			if (*s == '"' && s[1] == '"') {
				*o++ = '"';
				s += 2;
			} else if (*s == '"') {
				s++;
				break;
			} else {
				*o++ = *s++;
			}
		}
		*o = '\0';
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

/* "LPUSH (needed to benchmark LRANGE)" -> "LPUSH_needed_to_benchmark_LRANGE" */
static void test_name(const char *s, char *out, size_t outsz)
{
	size_t o = 0;

	for (; *s && o + 1 < outsz; s++) {
		char ch = isalnum((unsigned char)*s) ? *s : '_';
		if (ch == '_' && (!o || out[o - 1] == '_'))
			continue;
		out[o++] = ch;
	}
	while (o && out[o - 1] == '_')
		o--;
	out[o] = '\0';
}

static int valid_column(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 32)
		return 0;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

int parse_redis_benchmark(struct parse_ctx *pc, const char *text, size_t len)
{
	char cols[RB_COLS][33];
	int ncols = 0, rc = 0;
	struct lines it;
	char *line;

	lines_init(&it, text, len);
	while (!rc && (line = lines_next(&it))) {
		char *f[RB_COLS], name[RB_NAME_MAX + 1];
		int nf;

		pc->line = it.no;
		/* --csv prints nothing else; a run's other lines (warnings) are not CSV */
		if (line[0] != '"')
			continue;
		nf = split_csv(line, f, RB_COLS);
		if (nf < 0) {
			rc = parse_fail(pc, "not a CSV row of quoted fields (cut short?)");
			break;
		}
		if (!ncols && !strcmp(f[0], "test")) {
			/* redis-benchmark 6.2+: "test","rps","avg_latency_ms",... */
			for (int i = 0; i < nf; i++) {
				if (!valid_column(f[i])) {
					rc = parse_fail(pc, "bad column name \"%s\" in the header", f[i]);
					break;
				}
				snprintf(cols[i], sizeof(cols[i]), "%s", f[i]);
			}
			ncols = nf;
			continue;
		}
		if (!ncols) {
			/* before 6.2: "SET","123456.78" */
			snprintf(cols[0], sizeof(cols[0]), "test");
			snprintf(cols[1], sizeof(cols[1]), "rps");
			ncols = 2;
		}
		if (nf != ncols) {
			rc = parse_fail(pc, "%d fields where the header has %d (cut short?)", nf, ncols);
			break;
		}
		test_name(f[0], name, sizeof(name));
		if (!*name) {
			rc = parse_fail(pc, "no test name in \"%s\"", f[0]);
			break;
		}
		for (int i = 1; i < nf; i++) {
			char key[RB_NAME_MAX + 40];
			size_t cl = strlen(cols[i]);
			double v;
			if (cparse_double(f[i], &v)) {
				rc = parse_fail(pc, "%s: %s \"%s\" is not a number", f[0], cols[i], f[i]);
				break;
			}
			snprintf(key, sizeof(key), "%s.%s", name, cols[i]);
			if (!strcmp(cols[i], "rps"))
				parse_metric_as(pc, key, v, "requests/s", "higher");
			else if (cl > 3 && !strcmp(cols[i] + cl - 3, "_ms"))
				parse_metric_as(pc, key, v, "ms", "lower");
			else
				parse_metric(pc, key, v);
		}
	}
	lines_release(&it);
	return rc;
}
