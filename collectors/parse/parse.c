/*
 * parse.c - the table of output formats and what all parsers share: the
 * context (runs, units, the "file:line" of a failure) and line iteration.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/parse/metrics.h"
#include "collectors/parse/parse.h"

const struct parser parsers[] = {
	{"vm-scalability", "vm-scalability", parse_vm_scalability,
	 "vm-scalability case output (KB/s, truncate/fault times, free time)"},
	{"will-it-scale", "will-it-scale", parse_will_it_scale,
	 "will-it-scale runtest.py CSV (tasks,processes,...)"},
	{"ycsb", "ycsb", parse_ycsb, "YCSB client summary ([OVERALL], [READ], ...)"},
	{"memtier", "memtier", parse_memtier,
	 "memtier_benchmark tables and latency distribution, or its --json-out-file"},
	{"perf-profile", "perf-profile", parse_perf_profile,
	 "perf report --header with children/self and folded call chains"},
	{"vmstat", "vmstat", parse_vmstat, "vmstat(8) -t samples"},
	{"proc-vmstat", "proc-vmstat", parse_proc_vmstat, "/proc/vmstat (key value lines)"},
	{"lock_stat", "lock_stat", parse_lock_stat, "/proc/lock_stat version 0.3/0.4"},
	{"perf-lock", "perf-lock", parse_perf_lock,
	 "perf lock contention (by caller: contended, total/max/avg wait)"},
	{"readtwice", "readtwice", parse_readtwice,
	 "readtwice workload lines (MB/s per process and total) or dd(1) lines"},
	{"sysbench", "sysbench", parse_sysbench,
	 "sysbench report: cpu, memory, fileio, threads, mutex, OLTP (1.0; 0.4/0.5 OLTP)"},
	{"stress-ng", "stress-ng", parse_stress_ng,
	 "stress-ng --metrics: its --yaml file or its metrics table (per stressor)"},
	{"fio", "fio", parse_fio, "fio --output-format=json (per job and direction)"},
	{"redis-benchmark", "redis-benchmark", parse_redis_benchmark,
	 "redis-benchmark --csv (requests/s and latencies per test)"},
	{"pgbench", "pgbench", parse_pgbench, "pgbench summary (tps, latency, transactions)"},
	{"hackbench", "hackbench", parse_hackbench, "hackbench (rt-tests) Time: lines"},
	{"lkp-stats-json", "", parse_lkp_stats_json, "LKP stats.json (metric -> value(s))"},
	{"lkp-matrix-json", "", parse_lkp_matrix_json,
	 "LKP matrix.json (metric -> one value per run; one run per column)"},
	{"kv", "", parse_kv,
	 "any benchmark: \"name: value\" lines (LKP stats; a repeated name is a series)"},
	{"json", "", parse_json, "any benchmark: {\"name\": number or [numbers], ...}"},
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

static void full_name(struct buf *b, const struct parse_ctx *pc, const char *key)
{
	if (pc->program[0])
		buf_printf(b, "%s.%s", pc->program, key);
	else
		buf_puts(b, key);
}

int parse_metric(struct parse_ctx *pc, const char *key, double v)
{
	struct buf b = BUF_INIT;
	int rc;

	full_name(&b, pc, key);
	rc = metrics_add(parse_metrics(pc), buf_str(&b), v);
	buf_release(&b);
	return rc;
}

int parse_metric_as(struct parse_ctx *pc, const char *key, double v, const char *unit,
		    const char *direction)
{
	if (parse_metric(pc, key, v))
		return -1;
	if (unit)
		parse_unit(pc, key, unit);
	if (direction)
		parse_direction(pc, key, direction);
	return 0;
}

void parse_unit(struct parse_ctx *pc, const char *key, const char *unit)
{
	struct buf b = BUF_INIT;

	full_name(&b, pc, key);
	metric_name_clean(b.data);
	json_object_set_new(pc->units, buf_str(&b), json_string(unit));
	buf_release(&b);
}

void parse_direction(struct parse_ctx *pc, const char *key, const char *direction)
{
	struct buf b = BUF_INIT;

	full_name(&b, pc, key);
	metric_name_clean(b.data);
	json_object_set_new(pc->directions, buf_str(&b), json_string(direction));
	buf_release(&b);
}

json_t *parse_load_json(struct parse_ctx *pc, const char *text, size_t len, size_t first_line)
{
	json_error_t je;
	json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);

	if (!root) {
		pc->line = first_line + (size_t)(je.line > 1 ? je.line - 1 : 0);
		parse_fail(pc, "column %d: %s", je.column, je.text);
	}
	return root;
}

size_t parse_key_line(const char *text, size_t len, const char *key)
{
	json_t *s = json_string(key);
	char *quoted = s ? json_dumps(s, JSON_ENCODE_ANY) : NULL;
	size_t n = quoted ? strlen(quoted) : 0, line = 1;

	for (size_t i = 0; n && i + n <= len; i++) {
		size_t j = i + n;
		if (text[i] == '\n')
			line++;
		if (text[i] != '"' || memcmp(text + i, quoted, n))
			continue;
		while (j < len && strchr(" \t\r\n", text[j]) && text[j])
			j++;
		if (j < len && text[j] == ':')
			goto out;
	}
	line = 1;
out:
	free(quoted);
	json_decref(s);
	return line;
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
	json_t *saved_m = json_deep_copy(m), *saved_u = json_deep_copy(pc->units);
	json_t *saved_d = json_deep_copy(pc->directions);
	int rc = 0;

	pc->program = p->program;
	pc->line = 0;
	pc->err[0] = '\0';
	if (p->fn(pc, text, len)) {
		rc = -1;
	} else if (json_array_size(pc->runs) == before &&
		   json_object_size(parse_metrics(pc)) == had) {
		/* Count the lines so the message points at the end of the input. */
		size_t n = 0;
		for (size_t i = 0; i < len; i++)
			n += text[i] == '\n';
		pc->line = n + (len && text[len - 1] != '\n');
		rc = parse_fail(pc, "no %s results in %zu lines", p->format, pc->line);
	}
	if (rc) {
		/* What a failed parser added is not results: put the context back. */
		while (json_array_size(pc->runs) > before)
			json_array_remove(pc->runs, json_array_size(pc->runs) - 1);
		json_array_set(pc->runs, before - 1, saved_m);
		json_object_clear(pc->units);
		json_object_update(pc->units, saved_u);
		json_object_clear(pc->directions);
		json_object_update(pc->directions, saved_d);
	}
	json_decref(saved_m);
	json_decref(saved_u);
	json_decref(saved_d);
	return rc;
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
