/*
 * parse_ycsb.c - the YCSB client's summary ("[READ], Operations, 500") into
 * LKP's metrics: total_<op>_<field> summed over every client in the output
 * and avg_<op>_<field> their mean. LKP's rows, plus UPDATE, SCAN, DELETE and
 * READ-MODIFY-WRITE with the same fields as READ.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"
#include "collectors/parse/rx.h"

struct row {
	const char *section; /* between the brackets */
	const char *field;
	const char *key;     /* NULL: "<section>_<suffix>" */
	const char *suffix;
	int decimal;         /* 1: the value must read \d+\.\d+, 0: \d+ */
};

static const struct row fixed_rows[] = {
	{"OVERALL", "RunTime(ms)", "runtime", NULL, 0},
	{"OVERALL", "Throughput(ops/sec)", "throughput_ops/s", NULL, 1},
	{"TOTAL_GCS_G1_Young_Generation", "Count", "gcs_g1", NULL, 0},
	{"TOTAL_GC_TIME_G1_Young_Generation", "Time(ms)", "gc_time_g1", NULL, 0},
	{"TOTAL_GC_TIME_%_G1_Young_Generation", "Time(%)", "gc_time_%", NULL, 1},
	{"TOTAL_GCS_G1_Old_Generation", "Count", "gcs_g1_old", NULL, 0},
	{"TOTAL_GC_TIME_G1_Old_Generation", "Time(ms)", "gc_time_g1_old", NULL, 0},
	{"TOTAL_GC_TIME_%_G1_Old_Generation", "Time(%)", "gc_time_%_old", NULL, 1},
	{"TOTAL_GCs", "Count", "total_gcs", NULL, 0},
	{"TOTAL_GC_TIME", "Time(ms)", "total_gc_time", NULL, 0},
	{"TOTAL_GC_TIME_%", "Time(%)", "total_gc_time_%", NULL, 1},
	{NULL, NULL, NULL, NULL, 0},
};

static const char *const op_sections[] = {
	"READ",	  "READ-FAILED", "INSERT", "INSERT-FAILED", "UPDATE", "UPDATE-FAILED",
	"SCAN",	  "SCAN-FAILED", "DELETE", "READ-MODIFY-WRITE", "CLEANUP", NULL,
};

static const struct row op_fields[] = {
	{NULL, "Operations", NULL, "operations", 0},
	{NULL, "AverageLatency(us)", NULL, "averagelatency", 1},
	{NULL, "MinLatency(us)", NULL, "minlatency", 0},
	{NULL, "MaxLatency(us)", NULL, "maxlatency", 0},
	{NULL, "95thPercentileLatency(us)", NULL, "95%latency", 0},
	{NULL, "99thPercentileLatency(us)", NULL, "99%latency", 0},
	{NULL, NULL, NULL, NULL, 0},
};

#define YCSB_KEYS 256

struct totals {
	char *keys[YCSB_KEYS];
	struct dvec vals[YCSB_KEYS];
	size_t n;
};

static void add_result(struct totals *t, const char *key, double v)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->keys[i], key))
			break;
	if (i == t->n) {
		if (t->n == YCSB_KEYS)
			return;
		t->keys[t->n] = xstrdup(key);
		memset(&t->vals[t->n], 0, sizeof(t->vals[0]));
		t->n++;
	}
	dvec_push(&t->vals[i], v);
}

static int digits_ok(const char *s, int decimal)
{
	const char *p = s;

	while (isdigit((unsigned char)*p))
		p++;
	if (p == s)
		return 0;
	if (!decimal)
		return *p == '\0';
	if (*p++ != '.' || !isdigit((unsigned char)*p))
		return 0;
	while (isdigit((unsigned char)*p))
		p++;
	return *p == '\0';
}

/* The metric key of (section, field), or NULL; *decimal tells the number form. */
static const char *lookup(const char *section, const char *field, int *decimal, char *tmp,
			  size_t tmpsz)
{
	char op[64];
	size_t i;

	for (const struct row *r = fixed_rows; r->section; r++) {
		if (!strcmp(r->section, section) && !strcmp(r->field, field)) {
			*decimal = r->decimal;
			return r->key;
		}
	}
	for (i = 0; op_sections[i] && strcmp(op_sections[i], section); i++)
		;
	if (!op_sections[i] || strlen(section) >= sizeof(op))
		return NULL;
	for (i = 0; section[i]; i++)
		op[i] = section[i] == '-' ? '_' : (char)tolower((unsigned char)section[i]);
	op[i] = '\0';
	for (const struct row *r = op_fields; r->field; r++) {
		if (!strcmp(r->field, field)) {
			*decimal = r->decimal;
			snprintf(tmp, tmpsz, "%s_%s", op, r->suffix);
			return tmp;
		}
	}
	if (!strncmp(field, "Return=", 7) && field[7]) {
		/* Return=NOT_FOUND -> read_return_notfound, as LKP names it. */
		size_t o = (size_t)snprintf(tmp, tmpsz, "%s_return_", op);
		for (const char *p = field + 7; *p && o + 1 < tmpsz; p++)
			if (*p != '_')
				tmp[o++] = (char)tolower((unsigned char)*p);
		tmp[o] = '\0';
		*decimal = 0;
		return tmp;
	}
	return NULL;
}

int parse_ycsb(struct parse_ctx *pc, const char *text, size_t len)
{
	struct totals t = {.n = 0};
	struct rx line_rx, preload_rx;
	struct lines it;
	char *line;
	int rc = 0;

	rx_init(&line_rx, "\\[([^]]+)\\], ([^,]+), ([^ ,]+)$");
	rx_init(&preload_rx, "^preload duration: ([0-9]+\\.[0-9]+)$");
	lines_init(&it, text, len);
	while (!rc && (line = lines_next(&it))) {
		char section[128], field[128], num[64], tmp[160];
		const char *key;
		int decimal;
		double v;

		pc->line = it.no;
		if (rx_match(&preload_rx, line)) {
			if (rx_double(&preload_rx, 1, &v) == 0)
				parse_metric(pc, "preload_duration", v);
			continue;
		}
		if (!rx_match(&line_rx, line))
			continue;
		rx_str(&line_rx, 1, section, sizeof(section));
		rx_str(&line_rx, 2, field, sizeof(field));
		rx_str(&line_rx, 3, num, sizeof(num));
		key = lookup(section, field, &decimal, tmp, sizeof(tmp));
		if (!key || !digits_ok(num, decimal))
			continue;
		if (cparse_double(num, &v)) {
			rc = parse_fail(pc, "bad number %s", num);
			break;
		}
		add_result(&t, key, v);
		/* LKP also prints these two bare. */
		if (!strcmp(key, "insert_failed_operations") || !strcmp(key, "insert_failed_minlatency"))
			parse_metric(pc, key, v);
	}
	for (size_t i = 0; !rc && i < t.n; i++) {
		char key[200];
		snprintf(key, sizeof(key), "total_%s", t.keys[i]);
		parse_metric(pc, key, sum_kb(t.vals[i].v, t.vals[i].n));
	}
	for (size_t i = 0; !rc && i < t.n; i++) {
		char key[200];
		snprintf(key, sizeof(key), "avg_%s", t.keys[i]);
		parse_metric(pc, key, dvec_mean(&t.vals[i]));
	}
	for (size_t i = 0; i < t.n; i++) {
		free(t.keys[i]);
		dvec_release(&t.vals[i]);
	}
	lines_release(&it);
	rx_release(&line_rx);
	rx_release(&preload_rx);
	return rc;
}
