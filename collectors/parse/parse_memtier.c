/*
 * parse_memtier.c - memtier_benchmark output into LKP's memtier metrics:
 * total_ and avg_ of every ALL STATS column per type (Sets, Gets, Waits,
 * Totals) over all processes in the output, gets_miss_rate_%, and the
 * 90/95/99/99.9th percentile latencies from the latency distributions.
 * With --run-count the AGGREGATED AVERAGE tables count, not BEST or WORST.
 * Its --json-out-file gives the same names from "ALL STATS" (or the
 * aggregated results): the table's columns and the SET/GET distributions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"

#define MT_COLS 9
#define MT_PERCENTILES 4

static const char *const units[MT_COLS] = {
	"", "ops/s", "hits/s", "misses/s", "avg_latency_ms", "p50_latency_ms", "p99_latency_ms",
	"p99.9_latency_ms", "kb/s",
};
static const char *const types[4] = {"sets", "gets", "waits", "totals"};
static const char *const row_names[4] = {"Sets", "Gets", "Waits", "Totals"};
/* The JSON keys of the columns 1..8 ("Percentile Latencies" for 5..7). */
static const char *const json_cols[MT_COLS] = {
	"", "Ops/sec", "Hits/sec", "Misses/sec", "Average Latency", "p50.00", "p99.00", "p99.90",
	"KB/sec",
};
static const double percentiles[MT_PERCENTILES] = {90, 95, 99, 99.9};
static const char *const percentile_strs[MT_PERCENTILES] = {"90", "95", "99", "99.9"};

/* One latency histogram: bucket (10 us) -> cumulative percent, sorted by bucket. */
struct histo {
	long *bucket;
	double *percent;
	size_t n, cap;
};

struct histos {
	struct histo *h;
	size_t n, cap;
};

/* Later lines of the same bucket replace earlier ones, as in LKP's array. */
static void histo_set(struct histo *h, long bucket, double percent)
{
	size_t i = h->n;

	while (i > 0 && h->bucket[i - 1] > bucket)
		i--;
	if (i > 0 && h->bucket[i - 1] == bucket) {
		h->percent[i - 1] = percent;
		return;
	}
	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 64;
		h->bucket = xrealloc(h->bucket, h->cap * sizeof(long));
		h->percent = xrealloc(h->percent, h->cap * sizeof(double));
	}
	memmove(h->bucket + i + 1, h->bucket + i, (h->n - i) * sizeof(long));
	memmove(h->percent + i + 1, h->percent + i, (h->n - i) * sizeof(double));
	h->bucket[i] = bucket;
	h->percent[i] = percent;
	h->n++;
}

static void histo_copy(struct histo *dst, const struct histo *src)
{
	memset(dst, 0, sizeof(*dst));
	for (size_t i = 0; i < src->n; i++)
		histo_set(dst, src->bucket[i], src->percent[i]);
}

static void histo_release(struct histo *h)
{
	free(h->bucket);
	free(h->percent);
	memset(h, 0, sizeof(*h));
}

static void histos_push(struct histos *hs, const struct histo *h)
{
	if (hs->n == hs->cap) {
		hs->cap = hs->cap ? hs->cap * 2 : 8;
		hs->h = xrealloc(hs->h, hs->cap * sizeof(*hs->h));
	}
	histo_copy(&hs->h[hs->n++], h);
}

static void histos_release(struct histos *hs)
{
	for (size_t i = 0; i < hs->n; i++)
		histo_release(&hs->h[i]);
	free(hs->h);
	memset(hs, 0, sizeof(*hs));
}

/* Percent of histogram h at bucket b: its last line at or before b (0 before the first). */
static double histo_at(const struct histo *h, long b, size_t *cursor)
{
	while (*cursor < h->n && h->bucket[*cursor] <= b)
		(*cursor)++;
	return *cursor ? h->percent[*cursor - 1] : 0.0;
}

/*
 * LKP's rule: average the processes' cumulative percents bucket by bucket
 * (missing buckets repeat the previous value) and report, for each target
 * percentile, the first bucket whose average exceeds it. Only buckets that
 * some process printed can be first, so walking their union is exact.
 */
static void show_latencies(struct parse_ctx *pc, const struct histos *hs, const char *name)
{
	size_t *cur, *pos, pi = 0;
	long maxb = -1;
	double *col;

	if (!hs->n)
		return;
	cur = xcalloc(hs->n, sizeof(size_t));
	pos = xcalloc(hs->n, sizeof(size_t));
	col = xcalloc(hs->n, sizeof(double));
	for (size_t i = 0; i < hs->n; i++)
		if (hs->h[i].n && hs->h[i].bucket[hs->h[i].n - 1] > maxb)
			maxb = hs->h[i].bucket[hs->h[i].n - 1];
	for (;;) {
		long b = -1;
		double sum, avg;

		/* next bucket of the union */
		for (size_t i = 0; i < hs->n; i++)
			if (pos[i] < hs->h[i].n && (b < 0 || hs->h[i].bucket[pos[i]] < b))
				b = hs->h[i].bucket[pos[i]];
		if (b < 0 || b > maxb)
			break;
		for (size_t i = 0; i < hs->n; i++) {
			while (pos[i] < hs->h[i].n && hs->h[i].bucket[pos[i]] <= b)
				pos[i]++;
			col[i] = histo_at(&hs->h[i], b, &cur[i]);
		}
		sum = sum_kb(col, hs->n);
		if (sum == 0)
			continue;
		avg = sum / (double)hs->n;
		while (pi < MT_PERCENTILES && avg > percentiles[pi]) {
			char key[64];
			snprintf(key, sizeof(key), "%s_latency_%s%%_ms", name, percentile_strs[pi]);
			parse_metric_as(pc, key, (double)b / 100, "ms", "lower");
			pi++;
		}
		if (avg > percentiles[MT_PERCENTILES - 1])
			break;
	}
	free(cur);
	free(pos);
	free(col);
}

/* What all processes' tables and distributions add up to. */
struct mt_acc {
	double sum[4][MT_COLS];
	int num[4][MT_COLS];
	struct histos sets, gets;
};

/* Unit and direction of a column: rates up, misses and latencies down. */
static void column_meta(int col, const char **unit, const char **direction)
{
	static const char *const col_units[MT_COLS] = {
		"", "ops/s", "hits/s", "misses/s", "ms", "ms", "ms", "ms", "KB/s",
	};
	*unit = col_units[col];
	*direction = col == 3 || (col >= 4 && col <= 7) ? "lower" : "higher";
}

static void emit(struct parse_ctx *pc, struct mt_acc *a)
{
	const char *unit, *dir;
	char key[64];

	for (int t = 0; t < 4; t++)
		for (int i = 1; i < MT_COLS; i++)
			if (a->num[t][i]) {
				column_meta(i, &unit, &dir);
				snprintf(key, sizeof(key), "total_%s_%s", types[t], units[i]);
				parse_metric_as(pc, key, a->sum[t][i], unit, dir);
			}
	for (int t = 0; t < 4; t++) {
		for (int i = 1; i < MT_COLS; i++)
			if (a->num[t][i]) {
				column_meta(i, &unit, &dir);
				snprintf(key, sizeof(key), "avg_%s_%s", types[t], units[i]);
				parse_metric_as(pc, key, a->sum[t][i] / a->num[t][i], unit, dir);
			}
		if (t == 1 && a->num[1][2] && a->num[1][3]) {
			double hits = a->sum[1][2] / a->num[1][2], misses = a->sum[1][3] / a->num[1][3];
			if (hits + misses != 0)
				parse_metric_as(pc, "gets_miss_rate_%", 100 * misses / (hits + misses),
						"%", "lower");
		}
	}
	show_latencies(pc, &a->sets, "set");
	show_latencies(pc, &a->gets, "get");
}

static void acc_release(struct mt_acc *a)
{
	histos_release(&a->sets);
	histos_release(&a->gets);
}

static int parse_tables(struct parse_ctx *pc, const char *text, size_t len, struct mt_acc *a)
{
	struct histo proc_set = {0}, proc_get = {0};
	size_t nget = 0, table_at = 0;
	int is_set = -1, rc = 0, skip = 0;
	struct lines it;
	char *line;

	lines_init(&it, text, len);
	while (!rc && (line = lines_next(&it))) {
		char *f[16];
		size_t nf;
		int t = -1;
		double v;

		pc->line = it.no;
		/* --run-count: BEST and WORST repeat runs the AGGREGATED table averages */
		if (!strncmp(line, "BEST RUN RESULTS", 16) || !strncmp(line, "WORST RUN RESULTS", 17)) {
			skip = 1;
			continue;
		}
		if (!strncmp(line, "ALL STATS", 9) || !strncmp(line, "AGGREGATED AVERAGE RESULTS", 26)) {
			skip = 0;
			continue;
		}
		if (skip)
			continue;
		for (int i = 0; i < 4; i++)
			if (!strncmp(line, row_names[i], strlen(row_names[i])))
				t = i;
		if (t >= 0) {
			nf = split_ws(line, f, 16);
			for (size_t i = 1; i < nf && i < MT_COLS; i++) {
				/* "---" is Ruby's to_f 0.0: counted, adds nothing */
				if (cparse_double(f[i], &v))
					v = 0;
				a->sum[t][i] += v;
				a->num[t][i]++;
			}
			if (t == 3)
				table_at = 0;
		} else if (!strncmp(line, "Type", 4) && strstr(line, "Ops/sec")) {
			table_at = it.no;
		} else if (!strncmp(line, "Request Latency Distribution", 28)) {
			/* LKP starts a new SET histogram per process but keeps one GET
			 * histogram for all of them; kept so percentiles equal LKP's. */
			histo_release(&proc_set);
		} else if (!strncmp(line, "SET", 3) || !strncmp(line, "GET", 3)) {
			double ms, percent;
			nf = split_ws(line, f, 16);
			is_set = line[0] == 'S';
			if (nf < 3 || cparse_double(f[1], &ms) || cparse_double(f[2], &percent) ||
			    ms < 0 || ms > 1e9) {
				rc = parse_fail(pc, "bad latency distribution line");
				break;
			}
			histo_set(is_set ? &proc_set : &proc_get, (long)(ms * 100), percent);
		} else if (!strcmp(line, "---")) {
			if (is_set == 1)
				histos_push(&a->sets, &proc_set);
			else if (is_set == 0)
				nget++;
		} else if (!strncmp(line, "preload duration: ", 18)) {
			if (!cparse_double(line + 18, &v))
				parse_metric_as(pc, "preload_duration", v, NULL, "lower");
		}
	}
	if (!rc && table_at) {
		pc->line = it.no;
		rc = parse_fail(pc, "the table of line %zu ends before its Totals row: truncated "
				    "output?",
				table_at);
	}
	/* Every GET entry of LKP's list is the one shared histogram, as it ends. */
	for (size_t i = 0; !rc && i < nget; i++)
		histos_push(&a->gets, &proc_get);
	histo_release(&proc_set);
	histo_release(&proc_get);
	lines_release(&it);
	return rc;
}

/* A distribution array ([{"<=msec": x, "percent": y}, ...]) into hs; 0 or -1. */
static int json_histo(struct parse_ctx *pc, json_t *arr, const char *name, struct histos *hs)
{
	struct histo h = {0};
	json_t *e;
	size_t i;

	if (!json_is_array(arr) || !json_array_size(arr))
		return 0;
	json_array_foreach(arr, i, e) {
		json_t *ms = json_object_get(e, "<=msec"), *pct = json_object_get(e, "percent");
		if (!json_is_number(ms) || !json_is_number(pct) || json_number_value(ms) < 0 ||
		    json_number_value(ms) > 1e9) {
			histo_release(&h);
			return parse_fail(pc, "\"%s\"[%zu]: expected {\"<=msec\": N, \"percent\": N}",
					  name, i);
		}
		histo_set(&h, (long)(json_number_value(ms) * 100), json_number_value(pct));
	}
	histos_push(hs, &h);
	histo_release(&h);
	return 0;
}

static int parse_json_out(struct parse_ctx *pc, const char *text, size_t len, struct mt_acc *a)
{
	json_t *root = parse_load_json(pc, text, len, 1), *st = NULL, *v;
	const char *key, *what = "ALL STATS";
	int rc = 0;

	if (!root)
		return -1;
	st = json_object_get(root, "ALL STATS");
	if (!json_is_object(st))
		json_object_foreach(root, key, v)
			if (!strncmp(key, "AGGREGATED AVERAGE RESULTS", 26) && json_is_object(v)) {
				st = v;
				what = key;
				break;
			}
	pc->line = parse_key_line(text, len, what);
	if (!json_is_object(st)) {
		json_decref(root);
		return parse_fail(pc, "no \"ALL STATS\" or \"AGGREGATED AVERAGE RESULTS\" object: "
				      "not memtier_benchmark --json-out-file output");
	}
	for (int t = 0; !rc && t < 4; t++) {
		json_t *o = json_object_get(st, row_names[t]), *pl, *x;
		double count = 1, max_lat = 1, val;
		if (!o)
			continue;
		pl = json_object_get(o, "Percentile Latencies");
		if (json_is_number(json_object_get(o, "Count")))
			count = json_number_value(json_object_get(o, "Count"));
		if (json_is_number(json_object_get(o, "Max Latency")))
			max_lat = json_number_value(json_object_get(o, "Max Latency"));
		for (int i = 1; i < MT_COLS; i++) {
			x = json_object_get(i >= 5 && i <= 7 ? pl : o, json_cols[i]);
			if (!json_is_number(x)) {
				rc = parse_fail(pc, "%s.%s: no number \"%s\"", what, row_names[t],
						json_cols[i]);
				break;
			}
			val = json_number_value(x);
			if (count == 0 && i >= 4) {
				val = 0; /* the table prints "---" (counted as 0): nothing was timed */
			} else if ((i == 4 && val == 0) || (i >= 5 && i <= 7 && max_lat == 0)) {
				/* memtier 2.3 leaves the Totals' average (and, aggregated over
				 * runs, its histogram) unfilled: a value it does not carry */
				continue;
			}
			a->sum[t][i] += val;
			a->num[t][i]++;
		}
	}
	if (!rc)
		rc = json_histo(pc, json_object_get(st, "SET"), "SET", &a->sets);
	if (!rc)
		rc = json_histo(pc, json_object_get(st, "GET"), "GET", &a->gets);
	json_decref(root);
	return rc;
}

int parse_memtier(struct parse_ctx *pc, const char *text, size_t len)
{
	struct mt_acc a;
	size_t i = 0;
	int rc;

	memset(&a, 0, sizeof(a));
	while (i < len && strchr(" \t\r\n", text[i]) && text[i])
		i++;
	if (i < len && text[i] == '{')
		rc = parse_json_out(pc, text, len, &a);
	else
		rc = parse_tables(pc, text, len, &a);
	if (!rc)
		emit(pc, &a);
	acc_release(&a);
	return rc;
}
