/*
 * parse_pgbench.c - pgbench's summary into pgbench.* metrics with LKP's
 * names: tps (without initial connection time, or pgbench < 14's
 * "including connections establishing"), tps_exclude_connect (pgbench < 14),
 * transactions, latency_ms (average), latency_stddev_ms,
 * initial_connection_time_ms and failed_transactions (pgbench 15+).
 */
#include <stdio.h>
#include <string.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"

/* The number at s (up to a blank, '/' or the end); -1 when there is none. */
static int number_at(const char *s, double *out, const char **rest)
{
	size_t n = 0;

	while (*s == ' ')
		s++;
	while (s[n] && s[n] != ' ' && s[n] != '/')
		n++;
	*rest = s + n;
	return cparse_double_n(s, n, out);
}

/* "1.554 ms" or "1554 us" in milliseconds; -1 when neither. */
static int millis(const char *s, double *out)
{
	const char *unit;

	if (number_at(s, out, &unit))
		return -1;
	if (!strcmp(unit, " ms"))
		return 0;
	if (!strcmp(unit, " us")) {
		*out /= 1000;
		return 0;
	}
	if (!strcmp(unit, " s")) {
		*out *= 1000;
		return 0;
	}
	return -1;
}

int parse_pgbench(struct parse_ctx *pc, const char *text, size_t len)
{
	static const struct {
		const char *prefix, *key;
	} ms_rows[] = {
		{"latency average = ", "latency_ms"},
		{"latency stddev = ", "latency_stddev_ms"},
		{"initial connection time = ", "initial_connection_time_ms"},
	};
	size_t report_at = 0;
	int tps = 0, rc = 0;
	struct lines it;
	char *line;

	lines_init(&it, text, len);
	while (!rc && (line = lines_next(&it))) {
		const char *rest;
		double v;
		size_t i;

		pc->line = it.no;
		if (!strncmp(line, "transaction type: ", 18)) {
			report_at = it.no;
			continue;
		}
		if (!strncmp(line, "number of transactions actually processed: ", 43)) {
			/* "5144", or "10000/10000" with -t */
			if (number_at(line + 43, &v, &rest))
				rc = parse_fail(pc, "transactions processed: not a number");
			else
				parse_metric_as(pc, "transactions", v, "transactions", "higher");
			continue;
		}
		if (!strncmp(line, "number of failed transactions: ", 31)) {
			if (number_at(line + 31, &v, &rest))
				rc = parse_fail(pc, "failed transactions: not a number");
			else
				parse_metric_as(pc, "failed_transactions", v, "transactions", "lower");
			continue;
		}
		for (i = 0; i < sizeof(ms_rows) / sizeof(ms_rows[0]); i++)
			if (!strncmp(line, ms_rows[i].prefix, strlen(ms_rows[i].prefix)))
				break;
		if (i < sizeof(ms_rows) / sizeof(ms_rows[0])) {
			if (millis(line + strlen(ms_rows[i].prefix), &v))
				rc = parse_fail(pc, "%.*s: expected a time in ms or us",
						(int)strlen(ms_rows[i].prefix) - 3, line);
			else
				parse_metric_as(pc, ms_rows[i].key, v, "ms", "lower");
			continue;
		}
		if (!strncmp(line, "tps = ", 6)) {
			const char *key = "tps";
			if (number_at(line + 6, &v, &rest)) {
				rc = parse_fail(pc, "tps: not a number");
				continue;
			}
			if (strstr(rest, "(excluding connections establishing)"))
				key = "tps_exclude_connect";
			parse_metric_as(pc, key, v, "tps", "higher");
			tps = 1;
		}
	}
	if (!rc && report_at && !tps)
		rc = parse_fail(pc, "the report of line %zu has no \"tps = \" line: truncated output?",
				report_at);
	lines_release(&it);
	return rc;
}
