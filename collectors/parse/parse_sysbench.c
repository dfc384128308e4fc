/*
 * parse_sysbench.c - sysbench's final report into sysbench.* metrics, for
 * every test mode: OLTP (1.0 "SQL statistics", 0.4/0.5 "OLTP test
 * statistics"), cpu (events_per_sec), memory (total_operations,
 * operations_per_sec, transferred_mib, mib_per_sec), fileio (reads_per_sec,
 * writes_per_sec, fsyncs_per_sec, read_mib_per_sec, write_mib_per_sec),
 * and what all modes print: total_time, total_events,
 * latency_<min|avg|max|95th_percentile|sum>_ms, events_avg/stddev and
 * execution_time_avg/stddev (threads and mutex print only these).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"

enum section {
	S_NONE,
	S_SQL,
	S_QUERIES,
	S_GENERAL,
	S_LATENCY,
	S_FAIRNESS,
	S_CPU,
	S_FILEOPS,
	S_THROUGHPUT,
};

/* Unit and direction of every name the report gives; rows are exact keys. */
static const struct {
	const char *key, *unit, *direction;
} known[] = {
	{"transactions_per_sec", "tps", "higher"},
	{"queries_per_sec", "queries/s", "higher"},
	{"transactions", "transactions", "higher"},
	{"queries", "queries", "higher"},
	{"read_write_requests", "requests", "higher"},
	{"read_write_requests_per_sec", "requests/s", "higher"},
	{"other_operations", "operations", "higher"},
	{"other_operations_per_sec", "operations/s", "higher"},
	{"ignored_errors", "errors", "lower"},
	{"ignored_errors_per_sec", "errors/s", "lower"},
	{"reconnects", "reconnects", "lower"},
	{"reconnects_per_sec", "reconnects/s", "lower"},
	{"deadlocks", "deadlocks", "lower"},
	{"deadlocks_per_sec", "deadlocks/s", "lower"},
	{"total_time", "s", "lower"},
	{"total_time_taken_by_event_execution", "s", "lower"},
	{"total_events", "events", "higher"},
	{"events_per_sec", "events/s", "higher"},
	{"total_operations", "operations", "higher"},
	{"operations_per_sec", "operations/s", "higher"},
	{"transferred_mib", "MiB", "higher"},
	{"mib_per_sec", "MiB/s", "higher"},
	{"reads_per_sec", "reads/s", "higher"},
	{"writes_per_sec", "writes/s", "higher"},
	{"fsyncs_per_sec", "fsyncs/s", "higher"},
	{"read_mib_per_sec", "MiB/s", "higher"},
	{"write_mib_per_sec", "MiB/s", "higher"},
	{"events_avg", "events", "higher"},
	{"events_stddev", "events", "lower"},
	{"execution_time_avg", "s", "lower"},
	{"execution_time_stddev", "s", "lower"},
};

/* Append "sysbench.<key>" with its unit and direction (by rule for the unlisted). */
static void put(struct parse_ctx *pc, const char *key, double v)
{
	size_t n = strlen(key);

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(key, known[i].key)) {
			parse_metric_as(pc, key, v, known[i].unit, known[i].direction);
			return;
		}
	if (!strncmp(key, "latency_", 8))
		parse_metric_as(pc, key, v, "ms", "lower");
	else if (n > 8 && !strcmp(key + n - 8, "_queries"))
		parse_metric_as(pc, key, v, "queries", "higher");
	else
		parse_metric(pc, key, v);
}

/* "95th percentile" -> "95th_percentile"; "approx.  95 percentile" -> "95_percentile" */
static void clean_label(const char *s, size_t n, struct buf *out)
{
	if (n > 7 && !strncmp(s, "approx.", 7)) {
		s += 7;
		n -= 7;
	}
	for (size_t i = 0; i < n; i++) {
		char ch = (char)tolower((unsigned char)s[i]);
		if (!isalnum((unsigned char)ch))
			ch = '_';
		if (ch == '_' && (!out->len || out->data[out->len - 1] == '_'))
			continue;
		buf_putc(out, ch);
	}
	while (out->len && out->data[out->len - 1] == '_')
		out->data[--out->len] = '\0';
}

/* A leading number, with an optional unit suffix (s, ms); -1 when none. */
static int lead_number(const char *s, double *out, const char **rest)
{
	size_t n = 0;

	while (*s == ' ')
		s++;
	while ((isdigit((unsigned char)s[n]) || s[n] == '.') && n < 64)
		n++;
	if (!n || cparse_double_n(s, n, out))
		return -1;
	*rest = s + n;
	return 0;
}

/* The number after the first '(' of s ("(3745237.89 per second)"); -1 when none. */
static int paren_number(const char *s, double *out)
{
	const char *rest, *p = strchr(s, '(');

	return p ? lead_number(p + 1, out, &rest) : -1;
}

static void metric(struct parse_ctx *pc, const char *prefix, const struct buf *label,
		   const char *suffix, double v)
{
	struct buf key = BUF_INIT;
	buf_printf(&key, "%s%s%s", prefix, buf_str(label), suffix);
	put(pc, buf_str(&key), v);
	buf_release(&key);
}

/* fileio's per-second rates: "reads/s" -> reads_per_sec, "read, MiB/s" -> read_mib_per_sec. */
static int fileio_line(struct parse_ctx *pc, const char *label, double v)
{
	static const struct {
		const char *label, *key;
	} rows[] = {
		{"reads/s", "reads_per_sec"},	 {"writes/s", "writes_per_sec"},
		{"fsyncs/s", "fsyncs_per_sec"},	 {"read, MiB/s", "read_mib_per_sec"},
		{"written, MiB/s", "write_mib_per_sec"},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (!strcmp(label, rows[i].label)) {
			put(pc, rows[i].key, v);
			return 0;
		}
	return -1;
}

/* sysbench 1.1's "read:  IOPS=3211265.07 50176.02 MiB/s (52613.37 MB/s)"; 0, 1 (not it), -1. */
static int iops_line(struct parse_ctx *pc, const char *label, const char *value)
{
	static const char *const ops[][3] = {
		{"read", "reads_per_sec", "read_mib_per_sec"},
		{"write", "writes_per_sec", "write_mib_per_sec"},
		{"fsync", "fsyncs_per_sec", NULL},
	};
	const char *rest;
	double iops, mib;

	while (*value == ' ')
		value++;
	if (strncmp(value, "IOPS=", 5))
		return 1;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		if (strcmp(label, ops[i][0]))
			continue;
		if (lead_number(value + 5, &iops, &rest))
			return -1;
		put(pc, ops[i][1], iops);
		if (ops[i][2] && !lead_number(rest, &mib, &rest) && !strncmp(rest, " MiB/s", 6))
			put(pc, ops[i][2], mib);
		return 0;
	}
	return 1;
}

/* One "label: value" line of section sec; 0, or -1 with pc->err set. */
static int value_line(struct parse_ctx *pc, enum section sec, const char *label, size_t ln,
		      const char *value)
{
	struct buf l = BUF_INIT;
	const char *rest, *ps, *v0 = value;
	double v, v2;
	int rc = 0;

	while (*v0 == ' ' || *v0 == '\t')
		v0++;
	clean_label(label, ln, &l);
	if (sec == S_THROUGHPUT) {
		char lab[32];
		snprintf(lab, sizeof(lab), "%.*s", (int)(ln < 31 ? ln : 31), label);
		rc = iops_line(pc, lab, value);
		if (rc <= 0)
			goto out;
		rc = 0;
	}
	if (lead_number(value, &v, &rest)) {
		/* "queries performed:" and 0.4's "response time:" carry no value */
		if (*v0 && sec != S_NONE)
			rc = parse_fail(pc, "\"%.*s\": \"%s\" is not a number", (int)ln, label, v0);
		goto out;
	}
	switch (sec) {
	case S_QUERIES:
		metric(pc, "", &l, "_queries", v);
		break;
	case S_SQL:
		metric(pc, "", &l, "", v);
		ps = strstr(rest, "(");
		if (ps && strstr(ps, "per sec.") && !lead_number(ps + 1, &v2, &rest))
			metric(pc, "", &l, "_per_sec", v2);
		break;
	case S_GENERAL:
		if (!strcmp(buf_str(&l), "total_number_of_events")) {
			buf_reset(&l);
			buf_puts(&l, "total_events");
		}
		metric(pc, "", &l, "", v);
		break;
	case S_LATENCY:
		metric(pc, "latency_", &l, "_ms", v);
		break;
	case S_CPU:
		/* "events per second" -> events_per_sec */
		if (l.len > 11 && !strcmp(l.data + l.len - 11, "_per_second"))
			l.data[l.len -= 3] = '\0';
		metric(pc, "", &l, "", v);
		break;
	case S_FILEOPS:
	case S_THROUGHPUT: {
		char lab[32];
		snprintf(lab, sizeof(lab), "%.*s", (int)(ln < 31 ? ln : 31), label);
		if (fileio_line(pc, lab, v))
			metric(pc, "", &l, "", v);
		break;
	}
	case S_FAIRNESS: {
		/* "events (avg/stddev): 10000.0000/0.00" */
		struct buf base = BUF_INIT;
		const char *paren = strchr(label, '(');
		if (*rest != '/' || lead_number(rest + 1, &v2, &rest)) {
			rc = parse_fail(pc, "\"%.*s\": expected avg/stddev, not \"%s\"", (int)ln,
					label, v0);
			break;
		}
		clean_label(label, paren && (size_t)(paren - label) < ln ? (size_t)(paren - label) : ln,
			    &base);
		metric(pc, "", &base, "_avg", v);
		metric(pc, "", &base, "_stddev", v2);
		buf_release(&base);
		break;
	}
	case S_NONE:
		break;
	}
out:
	buf_release(&l);
	return rc;
}

/* The section a line at indent 0 opens (a report section when *report is set). */
static enum section section_of(const char *p, int *report)
{
	static const struct {
		const char *prefix;
		enum section sec;
	} heads[] = {
		{"SQL statistics", S_SQL},	      {"OLTP test statistics", S_SQL},
		{"General statistics", S_GENERAL},    {"Latency (ms)", S_LATENCY},
		{"Response time", S_LATENCY},	      {"Threads fairness", S_FAIRNESS},
		{"CPU speed", S_CPU},		      {"File operations", S_FILEOPS},
		{"Throughput", S_THROUGHPUT},
	};

	for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		if (!strncmp(p, heads[i].prefix, strlen(heads[i].prefix))) {
			*report = 1;
			return heads[i].sec;
		}
	return S_NONE;
}

/* memory mode's lines: "Total operations: N (X per second)" and "M MiB transferred (X MiB/sec)". */
static int memory_line(struct parse_ctx *pc, const char *p, int *report)
{
	const char *rest;
	double v, v2;

	if (!strncmp(p, "Total operations:", 17) || !strncmp(p, "Operations performed:", 21)) {
		*report = 1;
		if (lead_number(strchr(p, ':') + 1, &v, &rest) || paren_number(rest, &v2))
			return parse_fail(pc, "expected \"%.*s N (X per second)\"",
					  (int)(strchr(p, ':') - p + 1), p);
		put(pc, "total_operations", v);
		put(pc, "operations_per_sec", v2);
		return 1;
	}
	if (strstr(p, "B transferred (")) {
		*report = 1;
		if (lead_number(p, &v, &rest) || paren_number(rest, &v2))
			return parse_fail(pc, "expected \"N MiB transferred (X MiB/sec)\"");
		put(pc, "transferred_mib", v);
		put(pc, "mib_per_sec", v2);
		return 1;
	}
	return 0;
}

int parse_sysbench(struct parse_ctx *pc, const char *text, size_t len)
{
	enum section sec = S_NONE;
	int report = 0, complete = 0, rc = 0;
	struct lines it;
	char *line;

	lines_init(&it, text, len);
	while (!rc && (line = lines_next(&it))) {
		const char *p = line, *colon;
		int indent;

		pc->line = it.no;
		while (*p == ' ' || *p == '\t')
			p++;
		indent = (int)(p - line);
		if ((rc = memory_line(pc, p, &report)))
			rc = rc < 0 ? -1 : 0;
		else if (!*p || !(colon = strchr(p, ':')))
			continue;
		else if (indent == 0)
			sec = section_of(p, &report);
		else if (!strncmp(p, "queries performed:", 18))
			sec = S_QUERIES;
		else if (!strncmp(p, "per-request statistics:", 23))
			sec = S_LATENCY;
		else if (!strncmp(p, "total time:", 11) || !strncmp(p, "total number of events:", 23))
			rc = value_line(pc, S_GENERAL, p, (size_t)(colon - p), colon + 1);
		else {
			if (sec == S_QUERIES && indent <= 4)
				sec = S_SQL;
			rc = value_line(pc, sec, p, (size_t)(colon - p), colon + 1);
			/* the report's last line */
			if (!rc && sec == S_FAIRNESS && !strncmp(p, "execution time", 14))
				complete = 1;
		}
	}
	if (!rc && report && !complete)
		rc = parse_fail(pc, "the report ends before its last line, \"execution time "
				    "(avg/stddev)\": truncated output?");
	lines_release(&it);
	return rc;
}
