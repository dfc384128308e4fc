/*
 * parse_sysbench.c - sysbench's final report (1.0 "SQL statistics" OLTP
 * output, and 0.4/0.5 "OLTP test statistics") into sysbench.* metrics:
 * transactions_per_sec, queries_per_sec, <read|write|other|total>_queries,
 * total_time, total_events, latency_<min|avg|max|95th_percentile|sum>_ms,
 * events_avg/stddev and execution_time_avg/stddev.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbuf.h"
#include "cutil.h"
#include "parse.h"

enum section { S_NONE, S_SQL, S_QUERIES, S_GENERAL, S_LATENCY, S_FAIRNESS };

/* "95th percentile" -> "95th_percentile"; "approx.  95 percentile" -> "95_percentile" */
static void clean_label(const char *s, size_t n, struct cbuf *out)
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
		cbuf_putc(out, ch);
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

static void metric(struct parse_ctx *pc, const char *prefix, const struct cbuf *label,
		   const char *suffix, double v)
{
	struct cbuf key = CBUF_INIT;
	cbuf_printf(&key, "%s%s%s", prefix, cbuf_str(label), suffix);
	parse_metric(pc, cbuf_str(&key), v);
	cbuf_release(&key);
}

static void value_line(struct parse_ctx *pc, enum section sec, const char *label, size_t ln,
		      const char *value)
{
	struct cbuf l = CBUF_INIT;
	const char *rest, *ps;
	double v, v2;

	clean_label(label, ln, &l);
	if (lead_number(value, &v, &rest))
		goto out;
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
		if (!strcmp(cbuf_str(&l), "total_number_of_events")) {
			cbuf_reset(&l);
			cbuf_puts(&l, "total_events");
		}
		metric(pc, "", &l, "", v);
		break;
	case S_LATENCY:
		metric(pc, "latency_", &l, "_ms", v);
		break;
	case S_FAIRNESS:
		/* "events (avg/stddev): 10000.0000/0.00" */
		if (*rest == '/' && !lead_number(rest + 1, &v2, &rest)) {
			struct cbuf base = CBUF_INIT;
			const char *paren = strchr(label, '(');
			clean_label(label, paren && (size_t)(paren - label) < ln ? (size_t)(paren - label) : ln,
				    &base);
			metric(pc, "", &base, "_avg", v);
			metric(pc, "", &base, "_stddev", v2);
			cbuf_release(&base);
		}
		break;
	case S_NONE:
		break;
	}
out:
	cbuf_release(&l);
}

int parse_sysbench(struct parse_ctx *pc, const char *text, size_t len)
{
	enum section sec = S_NONE;
	struct lines it;
	char *line;

	lines_init(&it, text, len);
	while ((line = lines_next(&it))) {
		const char *p = line, *colon;
		int indent;

		pc->line = it.no;
		while (*p == ' ' || *p == '\t')
			p++;
		indent = (int)(p - line);
		colon = strchr(p, ':');
		if (!*p || !colon)
			continue;
		if (indent == 0) {
			if (!strncmp(p, "SQL statistics", 14) || !strncmp(p, "OLTP test statistics", 20))
				sec = S_SQL;
			else if (!strncmp(p, "General statistics", 18))
				sec = S_GENERAL;
			else if (!strncmp(p, "Latency (ms)", 12) ||
				 !strncmp(p, "Response time", 13))
				sec = S_LATENCY;
			else if (!strncmp(p, "Threads fairness", 16))
				sec = S_FAIRNESS;
			else
				sec = S_NONE;
			continue;
		}
		if (!strncmp(p, "queries performed:", 18)) {
			sec = S_QUERIES;
			continue;
		}
		if (!strncmp(p, "per-request statistics:", 23)) {
			sec = S_LATENCY;
			continue;
		}
		if (sec == S_QUERIES && indent <= 4)
			sec = S_SQL;
		if (!strncmp(p, "total time:", 11) || !strncmp(p, "total number of events:", 23))
			value_line(pc, S_GENERAL, p, (size_t)(colon - p), colon + 1);
		else
			value_line(pc, sec, p, (size_t)(colon - p), colon + 1);
	}
	lines_release(&it);
	if (json_object_size(parse_metrics(pc))) {
		parse_unit(pc, "transactions_per_sec", "tps");
		parse_unit(pc, "total_time", "s");
	}
	return 0;
}
