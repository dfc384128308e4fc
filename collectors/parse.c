/*
 * parse.c - the table of output formats and what all parsers share: the
 * context (runs, units, the "file:line" of a failure) and line iteration.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbuf.h"
#include "cutil.h"
#include "metrics.h"
#include "parse.h"

const struct parser parsers[] = {
	{"vm-scalability", "vm-scalability", parse_vm_scalability,
	 "vm-scalability case output (KB/s, truncate/fault times, free time)"},
	{"will-it-scale", "will-it-scale", parse_will_it_scale,
	 "will-it-scale runtest.py CSV (tasks,processes,...)"},
	{"ycsb", "ycsb", parse_ycsb, "YCSB client summary ([OVERALL], [READ], ...)"},
	{"memtier", "memtier", parse_memtier,
	 "memtier_benchmark ALL STATS tables and latency distribution"},
	{"perf-profile", "perf-profile", parse_perf_profile,
	 "perf report --header with children/self and folded call chains"},
	{"vmstat", "vmstat", parse_vmstat, "vmstat(8) -t samples"},
	{"proc-vmstat", "proc-vmstat", parse_proc_vmstat, "/proc/vmstat (key value lines)"},
	{"lock_stat", "lock_stat", parse_lock_stat, "/proc/lock_stat version 0.3/0.4"},
	{"readtwice", "readtwice", parse_readtwice,
	 "readtwice workload lines (MB/s per process and total) or dd(1) lines"},
	{"sysbench", "sysbench", parse_sysbench, "sysbench 1.0 OLTP summary"},
	{"lkp-stats-json", "", parse_lkp_stats_json, "LKP stats.json (metric -> value(s))"},
	{"lkp-matrix-json", "", parse_lkp_matrix_json,
	 "LKP matrix.json (metric -> one value per run; one run per column)"},
	{NULL, NULL, NULL, NULL},
};

const struct parser *parser_find(const char *name)
{
	for (const struct parser *p = parsers; p->format; p++)
		if (!strcmp(p->format, name))
			return p;
	return NULL;
}

void parse_ctx_init(struct parse_ctx *pc, const char *file)
{
	memset(pc, 0, sizeof(*pc));
	pc->file = file;
	pc->program = "";
	pc->runs = json_array();
	json_array_append_new(pc->runs, json_object());
	pc->units = json_object();
	pc->directions = json_object();
}

void parse_ctx_release(struct parse_ctx *pc)
{
	json_decref(pc->runs);
	json_decref(pc->units);
	json_decref(pc->directions);
	pc->runs = pc->units = pc->directions = NULL;
}

json_t *parse_metrics(struct parse_ctx *pc)
{
	return json_array_get(pc->runs, json_array_size(pc->runs) - 1);
}

void parse_new_run(struct parse_ctx *pc)
{
	json_array_append_new(pc->runs, json_object());
}

static void full_name(struct cbuf *b, const struct parse_ctx *pc, const char *key)
{
	if (pc->program[0])
		cbuf_printf(b, "%s.%s", pc->program, key);
	else
		cbuf_puts(b, key);
}

int parse_metric(struct parse_ctx *pc, const char *key, double v)
{
	struct cbuf b = CBUF_INIT;
	int rc;

	full_name(&b, pc, key);
	rc = metrics_add(parse_metrics(pc), cbuf_str(&b), v);
	cbuf_release(&b);
	return rc;
}

void parse_unit(struct parse_ctx *pc, const char *key, const char *unit)
{
	struct cbuf b = CBUF_INIT;

	full_name(&b, pc, key);
	metric_name_clean(b.data);
	json_object_set_new(pc->units, cbuf_str(&b), json_string(unit));
	cbuf_release(&b);
}

void parse_direction(struct parse_ctx *pc, const char *key, const char *direction)
{
	struct cbuf b = CBUF_INIT;

	full_name(&b, pc, key);
	metric_name_clean(b.data);
	json_object_set_new(pc->directions, cbuf_str(&b), json_string(direction));
	cbuf_release(&b);
}

int parse_fail(struct parse_ctx *pc, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(pc->err, sizeof(pc->err), "%s:%zu: %s", pc->file, pc->line, msg);
	return -1;
}

int parse_run(const struct parser *p, struct parse_ctx *pc, const char *text, size_t len)
{
	size_t before = json_array_size(pc->runs);
	json_t *m = parse_metrics(pc);
	size_t had = json_object_size(m);

	pc->program = p->program;
	pc->line = 0;
	pc->err[0] = '\0';
	if (p->fn(pc, text, len))
		return -1;
	if (json_array_size(pc->runs) == before && json_object_size(parse_metrics(pc)) == had) {
		/* Count the lines so the message points at the end of the input. */
		size_t n = 0;
		for (size_t i = 0; i < len; i++)
			n += text[i] == '\n';
		pc->line = n + (len && text[len - 1] != '\n');
		return parse_fail(pc, "no %s results in %zu lines", p->format, pc->line);
	}
	return 0;
}

void lines_init(struct lines *it, const char *text, size_t len)
{
	memset(it, 0, sizeof(*it));
	it->p = text;
	it->end = text + len;
}

char *lines_next(struct lines *it)
{
	const char *nl;
	size_t n;

	if (it->p >= it->end)
		return NULL;
	nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
	n = nl ? (size_t)(nl - it->p) : (size_t)(it->end - it->p);
	if (n + 1 > it->cap) {
		it->cap = n + 1 > 256 ? n + 1 : 256;
		it->buf = xrealloc(it->buf, it->cap);
	}
	memcpy(it->buf, it->p, n);
	it->buf[n] = '\0';
	if (n && it->buf[n - 1] == '\r')
		it->buf[n - 1] = '\0';
	it->p += n + (nl != NULL);
	it->no++;
	return it->buf;
}

void lines_release(struct lines *it)
{
	free(it->buf);
	it->buf = NULL;
	it->cap = 0;
}

size_t split_ws(char *s, char **fields, size_t max)
{
	size_t n = 0;

	while (*s && n < max) {
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		fields[n++] = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		if (*s)
			*s++ = '\0';
	}
	return n;
}
