/*
 * stats_mmtests.c - compare-kernels rows and table text (see stats_mmtests.h).
 * Reproduces what mmtests' Perl printed from 2019 to 2024 for the same
 * samples, including its quirks (summing in best-first order, -99 for a zero
 * baseline, the header split at "-rc<digit>").
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/stats/stats.h"
#include "server/stats/stats_mmtests.h"
#include "lib/banned.h"

#define MMTESTS_W1 9       /* strlen("BHmean-50"): the longest stat name */
#define MMTESTS_CELL 23    /* "%12.2f" + " (%7.2f%%)" */
#define MMTESTS_PVALUE 0.10

static const int bmean_pct[3] = {50, 95, 99};

static int cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y) - (x > y);
}

static int cmp_asc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* headline mean of v[0..k), summed in that order; *valid = 0 for a bad Hmean */
static double headline(const double *v, size_t k, enum mmtests_dir dir, int *valid)
{
	double sum = 0.0;

	*valid = 1;
	for (size_t i = 0; i < k; i++) {
		if (dir == MMTESTS_HIGHER) {
			if (!(v[i] > 0.0)) {
				*valid = 0;
				return 0.0;
			}
			sum += 1.0 / v[i];
		} else {
			sum += v[i];
		}
	}
	return dir == MMTESTS_HIGHER ? (double)k / sum : sum / (double)k;
}

/* The rows that are the summary's own fields: Min, Stddev, CoeffVar, Max. */
static void plain_rows(struct mmtests_summary *out)
{
	out->value[MMTESTS_MIN] = out->min;
	out->value[MMTESTS_STDDEV] = out->stddev;
	out->value[MMTESTS_COEFFVAR] = out->coeffvar;
	out->value[MMTESTS_MAX] = out->max;
	out->valid[MMTESTS_MIN] = 1;
	out->valid[MMTESTS_STDDEV] = 1;
	out->valid[MMTESTS_COEFFVAR] = 1;
	out->valid[MMTESTS_MAX] = 1;
}

int mmtests_summarize(const double *x, size_t n, enum mmtests_dir dir,
		      struct mmtests_summary *out)
{
	double *v, sum = 0.0, dev = 0.0;

	if (x == NULL || out == NULL || n == 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return -1;
	v = malloc(n * sizeof(*v));
	if (v == NULL)
		return -1;
	memcpy(v, x, n * sizeof(*v));
	qsort(v, n, sizeof(*v), dir == MMTESTS_HIGHER ? cmp_desc : cmp_asc);

	memset(out, 0, sizeof(*out));
	out->n = n;
	out->min = dir == MMTESTS_HIGHER ? v[n - 1] : v[0];
	out->max = dir == MMTESTS_HIGHER ? v[0] : v[n - 1];
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	out->amean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		dev += (v[i] - out->amean) * (v[i] - out->amean);
	out->stddev = n > 1 ? sqrt(dev / (double)(n - 1)) : 0.0;
	out->coeffvar = out->amean != 0.0 ? out->stddev * 100.0 / out->amean : 0.0;

	out->value[MMTESTS_MEAN] = headline(v, n, dir, &out->valid[MMTESTS_MEAN]);
	plain_rows(out);
	for (int i = 0; i < 3; i++) {
		size_t k = n * (size_t)bmean_pct[i] / 100;

		if (k < 1)
			k = 1;
		out->value[MMTESTS_BMEAN50 + i] =
			headline(v, k, dir, &out->valid[MMTESTS_BMEAN50 + i]);
	}
	free(v);
	return 0;
}

int mmtests_summarize_moments(const struct stats_moments *m, enum mmtests_dir dir,
			      struct mmtests_summary *out)
{
	if (m == NULL || out == NULL || m->n == 0 || !isfinite(m->mean))
		return -1;
	memset(out, 0, sizeof(*out));
	out->n = m->n;
	out->min = m->min;
	out->max = m->max;
	out->amean = m->mean;
	out->stddev = m->n > 1 ? stats_moments_stddev(m) : 0.0;
	out->coeffvar = out->amean != 0.0 ? out->stddev * 100.0 / out->amean : 0.0;
	if (dir == MMTESTS_HIGHER) {
		double h = stats_moments_hmean(m);
		out->valid[MMTESTS_MEAN] = isfinite(h);
		out->value[MMTESTS_MEAN] = isfinite(h) ? h : 0.0;
	} else {
		out->valid[MMTESTS_MEAN] = 1;
		out->value[MMTESTS_MEAN] = out->amean;
	}
	plain_rows(out);
	out->partial = 1;
	return 0;
}

const char *mmtests_stat_name(enum mmtests_stat stat, enum mmtests_dir dir)
{
	int hi = dir == MMTESTS_HIGHER;

	switch (stat) {
	case MMTESTS_MIN:
		return "Min";
	case MMTESTS_MEAN:
		return hi ? "Hmean" : "Amean";
	case MMTESTS_STDDEV:
		return "Stddev";
	case MMTESTS_COEFFVAR:
		return "CoeffVar";
	case MMTESTS_MAX:
		return "Max";
	case MMTESTS_BMEAN50:
		return hi ? "BHmean-50" : "BAmean-50";
	case MMTESTS_BMEAN95:
		return hi ? "BHmean-95" : "BAmean-95";
	case MMTESTS_BMEAN99:
		return hi ? "BHmean-99" : "BAmean-99";
	case MMTESTS_NSTATS:
		break;
	}
	return "";
}

/* mmtests' pdiff: higher is better */
static double pdiff(double a, double b)
{
	if (a == b || a == 0.0)
		return 0.0;
	if (b == 0.0)
		return 100.0;
	return a * 100.0 / b - 100.0;
}

/* mmtests' pndiff: lower is better */
static double pndiff(double a, double b)
{
	if (a == b)
		return 0.0;
	if (a == 0.0)
		return 100.0;
	if (b == 0.0)
		return -99.0;
	return 100.0 - a * 100.0 / b;
}

double mmtests_pct(enum mmtests_stat stat, enum mmtests_dir dir, double a, double b)
{
	if (isnan(a) || isnan(b))
		return NAN;
	if (stat == MMTESTS_STDDEV || stat == MMTESTS_COEFFVAR || dir == MMTESTS_LOWER)
		return pndiff(a, b);
	return pdiff(a, b);
}

int mmtests_significant(const struct mmtests_summary *base,
			const struct mmtests_summary *a)
{
	double mb, ma, se, t, df;

	if (base == NULL || a == NULL || !base->valid[MMTESTS_MEAN] ||
	    !a->valid[MMTESTS_MEAN])
		return 0;
	mb = base->value[MMTESTS_MEAN];
	ma = a->value[MMTESTS_MEAN];
	se = sqrt(base->stddev * base->stddev / (double)base->n +
		  a->stddev * a->stddev / (double)a->n);
	if (se == 0.0)
		return mb != ma;
	t = fabs(mb - ma) / se;
	df = (double)(base->n + a->n) - 2.0;
	/* df == 0 cannot happen here: two single samples have se == 0 */
	return stats_t_pvalue(t, df) < MMTESTS_PVALUE;
}

/* bounded appender: counts what would have been written, like snprintf */
struct line {
	char *buf;
	size_t cap;
	size_t len;
};

static void line_printf(struct line *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void line_printf(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;
	size_t room = l->len < l->cap ? l->cap - l->len : 0;

	va_start(ap, fmt);
	n = vsnprintf(room ? l->buf + l->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n;
}

int mmtests_format_row(char *buf, size_t cap, const char *stat, int w1,
		       const char *operand, int w2, size_t nkernels,
		       const double *value, const double *pct, const int *star)
{
	struct line l = {buf, cap, 0};

	if ((buf == NULL && cap > 0) || stat == NULL || operand == NULL ||
	    w1 < 0 || w2 < 0 || (nkernels > 0 && (value == NULL || pct == NULL)))
		return -1;
	if (cap > 0)
		buf[0] = '\0';
	line_printf(&l, "%-*s %-*s", w1, stat, w2, operand);
	for (size_t k = 0; k < nkernels; k++) {
		int s = star != NULL && star[k];

		if (isnan(value[k]))
			line_printf(&l, "%12s", "NaN");
		else
			line_printf(&l, "%12.2f", value[k]);
		if (isnan(pct[k]))
			line_printf(&l, s ? " *%7s%%*" : " (%7s%%)", "NaN");
		else if (s)
			line_printf(&l, " *%7.2f%%*", pct[k]);
		else
			line_printf(&l, " (%7.2f%%)", pct[k]);
	}
	return l.len > (size_t)0x7fffffff ? -1 : (int)l.len;
}

void mmtests_split_name(const char *name, size_t *head_len, const char **tail)
{
	const char *dash = strchr(name, '-');
	size_t idx, len = strlen(name);

	if (dash == NULL) {
		*head_len = len;
		*tail = name + len;
		return;
	}
	idx = (size_t)(dash - name);
	if (strncmp(dash, "-rc", 3) == 0 && dash[3] >= '0' && dash[3] <= '9')
		idx += 4;
	if (idx >= len) {
		*head_len = len;
		*tail = name + len;
		return;
	}
	*head_len = idx;
	*tail = name + idx + 1;
}

const char *mmtests_default_operand(const char *metric)
{
	const char *dot = strrchr(metric, '.');

	return dot ? dot + 1 : metric;
}

/* growable text for the table; one allocation policy: fail with -1 */
struct text {
	char *s;
	size_t len, cap;
	int failed;
};

static void text_reserve(struct text *t, size_t more)
{
	size_t want = t->len + more + 1;
	char *p;

	if (t->failed || want <= t->cap)
		return;
	if (want < 2 * t->cap)
		want = 2 * t->cap;
	p = realloc(t->s, want);
	if (p == NULL) {
		t->failed = 1;
		return;
	}
	t->s = p;
	t->cap = want;
}

static void text_printf(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void text_printf(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		t->failed = 1;
		return;
	}
	text_reserve(t, (size_t)n);
	if (t->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	t->len += (size_t)n;
}

/* operands in numeric order; text that is not a number after them */
struct operand_ref {
	const char *s;
	size_t idx;
};

static int parse_number(const char *s, double *v)
{
	char *end;

	if (*s == '\0')
		return 0;
	*v = strtod(s, &end);
	return *end == '\0';
}

static int cmp_operand(const void *a, const void *b)
{
	const struct operand_ref *x = a, *y = b;
	double vx = 0.0, vy = 0.0;
	int nx = parse_number(x->s, &vx), ny = parse_number(y->s, &vy), c;

	if (nx && ny && vx != vy)
		return (vx > vy) - (vx < vy);
	if (nx != ny)
		return ny - nx;
	c = strcmp(x->s, y->s);
	if (c)
		return c;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static void render_header(struct text *out, const struct mmtests_table *t, int pad)
{
	for (int line = 0; line < 2; line++) {
		text_printf(out, "%*s", pad, "");
		for (size_t k = 0; k < t->nkernels; k++) {
			size_t head;
			const char *tail;

			mmtests_split_name(t->kernels[k], &head, &tail);
			if (line == 0)
				text_printf(out, "%*.*s", MMTESTS_CELL, (int)head, t->kernels[k]);
			else
				text_printf(out, "%*s", MMTESTS_CELL, tail);
		}
		text_printf(out, "\n");
	}
}

static int render_rows(struct text *out, const struct mmtests_table *t,
		       const struct operand_ref *ops, int w2)
{
	size_t nk = t->nkernels, no = t->noperands;
	struct mmtests_summary *sum = NULL;
	double *value = NULL, *pct = NULL;
	int *star = NULL, *have = NULL, ret = -1;
	char *row = NULL;
	size_t rowcap = (size_t)MMTESTS_W1 + 2 + (size_t)w2 + nk * (MMTESTS_CELL + 16) + 1;

	sum = calloc(no * nk, sizeof(*sum));
	have = calloc(no * nk, sizeof(*have));
	value = calloc(nk, sizeof(*value));
	pct = calloc(nk, sizeof(*pct));
	star = calloc(nk, sizeof(*star));
	row = malloc(rowcap);
	if (!sum || !have || !value || !pct || !star || !row)
		goto out;

	for (size_t i = 0; i < no * nk; i++) {
		const struct stats_moments *a = t->archived ? t->archived[i] : NULL;

		if (a && a->n) { /* archived runs: from the moments */
			struct stats_moments m;
			if (t->nsamples[i] && t->samples[i] == NULL)
				goto out;
			stats_moments_of(t->samples[i], t->nsamples[i], &m);
			stats_moments_merge(&m, a);
			if (mmtests_summarize_moments(&m, t->dir, &sum[i]) < 0)
				goto out;
			have[i] = 1;
			continue;
		}
		if (t->nsamples[i] == 0)
			continue;
		if (t->samples[i] == NULL ||
		    mmtests_summarize(t->samples[i], t->nsamples[i], t->dir, &sum[i]) < 0)
			goto out;
		have[i] = 1;
	}

	for (int st = 0; st < MMTESTS_NSTATS; st++) {
		for (size_t oi = 0; oi < no; oi++) {
			size_t o = ops[oi].idx, base = o * nk;
			int len;

			for (size_t k = 0; k < nk; k++) {
				size_t c = base + k;

				int absent = st >= MMTESTS_BMEAN50 &&
					     ((have[c] && sum[c].partial) ||
					      (have[base] && sum[base].partial));

				value[k] = have[c] && !(st >= MMTESTS_BMEAN50 && sum[c].partial)
						   ? sum[c].value[st]
						   : NAN;
				pct[k] = have[base] && have[c] && !absent
					? mmtests_pct((enum mmtests_stat)st, t->dir,
						      value[k], sum[base].value[st])
					: NAN;
				star[k] = st == MMTESTS_MEAN && k > 0 && have[base] &&
					  have[c] && mmtests_significant(&sum[base], &sum[c]);
			}
			len = mmtests_format_row(row, rowcap,
						 mmtests_stat_name((enum mmtests_stat)st, t->dir),
						 MMTESTS_W1, ops[oi].s, w2, nk, value, pct, star);
			if (len < 0 || (size_t)len >= rowcap)
				goto out;
			text_printf(out, "%s\n", row);
		}
	}
	ret = 0;
out:
	free(row);
	free(star);
	free(pct);
	free(value);
	free(have);
	free(sum);
	return ret;
}

int mmtests_render(const struct mmtests_table *t, char **out, size_t *len)
{
	struct text txt = {NULL, 0, 0, 0};
	struct operand_ref *ops = NULL;
	size_t w2 = 0;
	int ret = -1;

	if (out == NULL)
		return -1;
	*out = NULL;
	if (t == NULL || t->nkernels == 0 || t->noperands == 0 || t->kernels == NULL ||
	    t->operands == NULL || t->samples == NULL || t->nsamples == NULL)
		return -1;
	if (t->nkernels > 4096 || t->noperands > 1000000)
		return -1;
	for (size_t k = 0; k < t->nkernels; k++)
		if (t->kernels[k] == NULL)
			return -1;

	ops = calloc(t->noperands, sizeof(*ops));
	if (ops == NULL)
		return -1;
	for (size_t o = 0; o < t->noperands; o++) {
		if (t->operands[o] == NULL)
			goto out;
		ops[o].s = t->operands[o];
		ops[o].idx = o;
		if (strlen(t->operands[o]) > w2)
			w2 = strlen(t->operands[o]);
	}
	if (w2 > 1024)
		goto out;
	qsort(ops, t->noperands, sizeof(*ops), cmp_operand);

	if (t->title != NULL)
		text_printf(&txt, "%s\n\n", t->title);
	render_header(&txt, t, MMTESTS_W1 + 1 + (int)w2);
	if (render_rows(&txt, t, ops, (int)w2) < 0)
		goto out;
	text_reserve(&txt, 0);
	if (txt.failed)
		goto out;
	txt.s[txt.len] = '\0';
	*out = txt.s;
	if (len != NULL)
		*len = txt.len;
	txt.s = NULL;
	ret = 0;
out:
	free(txt.s);
	free(ops);
	return ret;
}
