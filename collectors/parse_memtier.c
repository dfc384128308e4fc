/*
 * parse_memtier.c - memtier_benchmark output into LKP's memtier metrics:
 * total_ and avg_ of every ALL STATS column per type (Sets, Gets, Waits,
 * Totals) over all processes in the output, gets_miss_rate_%, and the
 * 90/95/99/99.9th percentile latencies from the latency distributions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cutil.h"
#include "parse.h"

#define MT_COLS 9
#define MT_PERCENTILES 4

static const char *const units[MT_COLS] = {
	"", "ops/s", "hits/s", "misses/s", "avg_latency_ms", "p50_latency_ms", "p99_latency_ms",
	"p99.9_latency_ms", "kb/s",
};
static const char *const types[4] = {"sets", "gets", "waits", "totals"};
static const char *const row_names[4] = {"Sets", "Gets", "Waits", "Totals"};
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
			parse_metric(pc, key, (double)b / 100);
			pi++;
		}
		if (avg > percentiles[MT_PERCENTILES - 1])
			break;
	}
	free(cur);
	free(pos);
	free(col);
}

int parse_memtier(struct parse_ctx *pc, const char *text, size_t len)
{
	double sum[4][MT_COLS] = {{0}};
	int num[4][MT_COLS] = {{0}};
	struct histo proc_set = {0}, proc_get = {0};
	struct histos sets = {0}, gets = {0};
	size_t nget = 0;
	int is_set = -1, rc = 0;
	struct lines it;
	char *line;

	lines_init(&it, text, len);
	while (!rc && (line = lines_next(&it))) {
		char *f[16];
		size_t nf;
		int t = -1;
		double v;

		pc->line = it.no;
		for (int i = 0; i < 4; i++)
			if (!strncmp(line, row_names[i], strlen(row_names[i])))
				t = i;
		if (t >= 0) {
			nf = split_ws(line, f, 16);
			for (size_t i = 1; i < nf && i < MT_COLS; i++) {
				/* "---" is Ruby's to_f 0.0: counted, adds nothing */
				if (cparse_double(f[i], &v))
					v = 0;
				sum[t][i] += v;
				num[t][i]++;
			}
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
				histos_push(&sets, &proc_set);
			else if (is_set == 0)
				nget++;
		} else if (!strncmp(line, "preload duration: ", 18)) {
			if (!cparse_double(line + 18, &v))
				parse_metric(pc, "preload_duration", v);
		}
	}
	for (int t = 0; !rc && t < 4; t++)
		for (int i = 1; i < MT_COLS; i++)
			if (num[t][i]) {
				char key[64];
				snprintf(key, sizeof(key), "total_%s_%s", types[t], units[i]);
				parse_metric(pc, key, sum[t][i]);
			}
	for (int t = 0; !rc && t < 4; t++) {
		for (int i = 1; i < MT_COLS; i++)
			if (num[t][i]) {
				char key[64];
				snprintf(key, sizeof(key), "avg_%s_%s", types[t], units[i]);
				parse_metric(pc, key, sum[t][i] / num[t][i]);
			}
		if (t == 1 && num[1][2] && num[1][3]) {
			double hits = sum[1][2] / num[1][2], misses = sum[1][3] / num[1][3];
			if (hits + misses != 0)
				parse_metric(pc, "gets_miss_rate_%", 100 * misses / (hits + misses));
		}
	}
	/* Every GET entry of LKP's list is the one shared histogram, as it ends. */
	for (size_t i = 0; i < nget; i++)
		histos_push(&gets, &proc_get);
	if (!rc) {
		show_latencies(pc, &sets, "set");
		show_latencies(pc, &gets, "get");
		if (num[0][1] || num[1][1] || num[3][1]) {
			parse_unit(pc, "total_totals_ops/s", "ops/s");
			parse_unit(pc, "avg_totals_ops/s", "ops/s");
		}
	}
	histo_release(&proc_set);
	histo_release(&proc_get);
	histos_release(&sets);
	histos_release(&gets);
	lines_release(&it);
	return rc;
}
