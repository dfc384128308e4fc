/*
 * stats_lkp_text.c - LKP's text: Ruby-style number formats, one row, and a
 * whole comparison block as `lkp ncompare` prints it (lib/compare.rb's printf
 * formats). Declared in stats_lkp.h; stats_lkp.c decides what gets a row.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/stats/stats_lkp.h"
#include "lib/banned.h"

/* ---- number formats ---------------------------------------------------- */

#define DIGITS_MAX 400 /* 309 integer digits of DBL_MAX, decimals, sign */

/*
 * Shortest decimal digits that read back as v (v > 0, finite):
 * v = 0.d[0]d[1]...d[n-1] x 10^(*exp10 + 1), no trailing zeros.
 */
static size_t shortest_digits(double v, char *d, int *exp10)
{
	char tmp[40], *e;
	size_t n = 0;

	for (int p = 1; p <= 17; p++) {
		snprintf(tmp, sizeof(tmp), "%.*e", p - 1, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	for (const char *s = tmp; *s != 'e'; s++)
		if (*s >= '0' && *s <= '9')
			d[n++] = *s;
	e = strchr(tmp, 'e');
	*exp10 = (int)strtol(e + 1, NULL, 10);
	while (n > 1 && d[n - 1] == '0')
		n--;
	d[n] = '\0';
	return n;
}

/*
 * Keeps the first `keep` digits of d[0..n) rounding by the decimal string,
 * a tie half to even; returns 1 when a carry ran out of the front (the
 * caller then has "1" followed by zeros).
 */
static int round_digits(char *d, size_t n, size_t keep)
{
	int up;

	if (keep >= n)
		return 0;
	if (d[keep] > '5') {
		up = 1;
	} else if (d[keep] < '5') {
		up = 0;
	} else {
		up = 0;
		for (size_t i = keep + 1; i < n; i++)
			if (d[i] != '0')
				up = 1;
		if (!up) /* exactly half-way: to even */
			up = keep > 0 && ((d[keep - 1] - '0') & 1);
	}
	d[keep] = '\0';
	for (size_t i = keep; up && i-- > 0;) {
		if (d[i] == '9') {
			d[i] = '0';
		} else {
			d[i]++;
			up = 0;
		}
	}
	return up;
}

static int put_special(char *buf, size_t cap, double v)
{
	if (isnan(v))
		return snprintf(buf, cap, "NaN");
	return snprintf(buf, cap, v < 0 ? "-Inf" : "Inf");
}

/* Ruby's "%[+]<width>.<prec>f" */
static int fmt_f(char *buf, size_t cap, double v, int width, int prec, int plus)
{
	char d[DIGITS_MAX], a[DIGITS_MAX];
	size_t n, len = 0, point;
	int e;

	if (prec < 0 || prec > 40 || (buf == NULL && cap > 0))
		return -1;
	if (!isfinite(v))
		return snprintf(buf, cap, "%*s", width, isnan(v) ? "NaN" : v < 0 ? "-Inf" : "Inf");
	/* a: the digits in fixed notation, the point after `point` of them */
	if (v == 0.0) {
		a[0] = '0';
		len = 1;
		point = 1;
	} else {
		n = shortest_digits(fabs(v), d, &e);
		if (e >= 0) {
			for (size_t i = 0; i < n || i < (size_t)e + 1; i++)
				a[len++] = i < n ? d[i] : '0';
			point = (size_t)e + 1;
		} else {
			a[len++] = '0';
			for (int i = 0; i < -e - 1 && len < DIGITS_MAX - 20; i++)
				a[len++] = '0';
			for (size_t i = 0; i < n && len < DIGITS_MAX - 20; i++)
				a[len++] = d[i];
			point = 1;
		}
	}
	while (len < point + (size_t)prec)
		a[len++] = '0';
	if (round_digits(a, len, point + (size_t)prec)) {
		memmove(a + 1, a, point + (size_t)prec);
		a[0] = '1';
		point++;
	}
	len = point + (size_t)prec;
	a[len] = '\0';
	{
		char out[DIGITS_MAX + 4];
		size_t o = 0;

		if (signbit(v))
			out[o++] = '-';
		else if (plus)
			out[o++] = '+';
		memcpy(out + o, a, point);
		o += point;
		if (prec > 0) {
			out[o++] = '.';
			memcpy(out + o, a + point, (size_t)prec);
			o += (size_t)prec;
		}
		out[o] = '\0';
		return snprintf(buf, cap, "%*s", width, out);
	}
}

/* Ruby's "%[+]<width>.<prec>g" */
static int fmt_g(char *buf, size_t cap, double v, int width, int prec, int plus)
{
	char d[DIGITS_MAX], out[64];
	const char *sign = signbit(v) ? "-" : plus ? "+" : "";
	size_t n;
	int e;

	if (prec < 1 || prec > 17)
		return -1;
	if (!isfinite(v))
		return snprintf(buf, cap, "%*s", width, isnan(v) ? "NaN" : v < 0 ? "-Inf" : "Inf");
	if (v == 0.0)
		return snprintf(buf, cap, "%*s", width, signbit(v) ? "-0" : plus ? "+0" : "0");
	n = shortest_digits(fabs(v), d, &e);
	if (round_digits(d, n, (size_t)prec)) {
		memmove(d + 1, d, (size_t)prec);
		d[0] = '1';
		d[prec + 1] = '\0';
		e++;
	}
	n = strlen(d);
	if (n > (size_t)prec)
		n = (size_t)prec;
	while (n > 1 && d[n - 1] == '0')
		n--;
	d[n] = '\0';
	if (e < -4 || e >= prec) {
		snprintf(out, sizeof(out), "%s%c%s%.16se%c%02d", sign, d[0], n > 1 ? "." : "",
			 d + 1, e < 0 ? '-' : '+', e < 0 ? -e : e);
	} else if (e >= 0) {
		char ip[24], fp[24];
		size_t il = (size_t)e + 1;

		for (size_t i = 0; i < il; i++)
			ip[i] = i < n ? d[i] : '0';
		ip[il] = '\0';
		snprintf(fp, sizeof(fp), "%s", n > il ? d + il : "");
		snprintf(out, sizeof(out), "%s%s%s%s", sign, ip, *fp ? "." : "", fp);
	} else {
		snprintf(out, sizeof(out), "%s0.%.*s%.17s", sign, -e - 1, "0000", d);
	}
	return snprintf(buf, cap, "%*s", width, out);
}

int lkp_format_fixed(char *buf, size_t cap, double v, int prec)
{
	if (buf == NULL && cap > 0)
		return -1;
	if (!isfinite(v))
		return put_special(buf, cap, v);
	return fmt_f(buf, cap, v, 0, prec, 0);
}

int lkp_format_value(char *buf, size_t cap, double v)
{
	if (buf == NULL && cap > 0)
		return -1;
	/* a value that "%.2f" would print as 0.00 keeps three digits */
	if (v != 0 && fabs(v) < 0.005)
		return fmt_g(buf, cap, v, 10, 3, 0);
	if (fabs(v) < 1000)
		return fmt_f(buf, cap, v, 10, 2, 0);
	if (fabs(v) > 100000000)
		return fmt_g(buf, cap, v, 10, 4, 0);
	return snprintf(buf, cap, "%10lld", (long long)trunc(v));
}

int lkp_format_change(char *buf, size_t cap, double change, int absolute)
{
	char num[64];
	int r;

	if (buf == NULL && cap > 0)
		return -1;
	if (fabs(change) < 100000)
		r = fmt_f(num, sizeof(num), change, 10, 1, 1);
	else
		r = fmt_g(num, sizeof(num), change, 10, 2, 1);
	if (r < 0 || (size_t)r >= sizeof(num))
		return -1;
	return snprintf(buf, cap, "%s%s", num, absolute ? " " : "%");
}

int lkp_format_stddev(char *buf, size_t cap, double stddev_pct)
{
	if (buf == NULL && cap > 0)
		return -1;
	if (isnan(stddev_pct) || !(stddev_pct > 2))
		return snprintf(buf, cap, "      ");
	if (stddev_pct > 1e9)
		stddev_pct = 1e9;
	return snprintf(buf, cap, " \xc2\xb1%3d%%", (int)stddev_pct);
}

/* bounded appender: counts what would have been written, like snprintf */
struct out {
	char *buf;
	size_t cap;
	size_t len;
	int err;
};

static void out_add(struct out *o, const char *s)
{
	size_t n = strlen(s);

	if (o->len < o->cap) {
		size_t room = o->cap - o->len - 1;

		memcpy(o->buf + o->len, s, n < room ? n : room);
		o->buf[o->len + (n < room ? n : room)] = '\0';
	}
	o->len += n;
}

static void out_field(struct out *o, int r, const char *s)
{
	if (r < 0)
		o->err = 1;
	else
		out_add(o, s);
}

int lkp_row_format(const struct lkp_row *row, char *buf, size_t cap)
{
	struct out o = {buf, cap, 0, 0};
	char f[128];

	if (row == NULL || (buf == NULL && cap > 0) || row->name == NULL ||
	    row->ncols == 0 || row->ncols > LKP_MAX_COLUMNS)
		return -1;
	if (cap > 0)
		buf[0] = '\0';
	for (size_t c = 0; c < row->ncols; c++) {
		if (row->failure) {
			if (c > 0) {
				out_field(&o, fmt_f(f, sizeof(f), row->change[c], 10, 0, 0), f);
				out_add(&o, "% ");
			}
			if (row->fails[c] == 0.0)
				snprintf(f, sizeof(f), "%11s", "");
			else
				snprintf(f, sizeof(f), "%11lld", (long long)trunc(row->fails[c]));
			out_add(&o, f);
			snprintf(f, sizeof(f), ":%-4zu", row->runs[c]);
			out_add(&o, f);
			continue;
		}
		if (c > 0) {
			out_field(&o, lkp_format_change(f, sizeof(f), row->change[c], row->absolute), f);
			out_add(&o, " ");
		}
		out_field(&o, lkp_format_value(f, sizeof(f), row->mean[c]), f);
		out_field(&o, lkp_format_stddev(f, sizeof(f), row->stddev_pct[c]), f);
	}
	out_add(&o, "  ");
	out_add(&o, row->name);
	out_add(&o, "\n");
	if (o.err || o.len > 0x7fffffff)
		return -1;
	return (int)o.len;
}

/* ---- the block ------------------------------------------------------------- */

struct text {
	char *s;
	size_t len, cap;
	int failed;
};

static void text_add(struct text *t, const char *s, size_t n)
{
	if (t->failed)
		return;
	if (t->len + n + 1 > t->cap) {
		size_t want = t->len + n + 1;
		char *p;

		if (want < 2 * t->cap)
			want = 2 * t->cap;
		if (want < 256)
			want = 256;
		p = realloc(t->s, want);
		if (p == NULL) {
			t->failed = 1;
			return;
		}
		t->s = p;
		t->cap = want;
	}
	memcpy(t->s + t->len, s, n);
	t->len += n;
	t->s[t->len] = '\0';
}

static void text_printf(struct text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void text_printf(struct text *t, const char *fmt, ...)
{
	char small[512], *big;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		t->failed = 1;
		return;
	}
	if ((size_t)n < sizeof(small)) {
		text_add(t, small, (size_t)n);
		return;
	}
	big = malloc((size_t)n + 1);
	if (big == NULL) {
		t->failed = 1;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	text_add(t, big, (size_t)n);
	free(big);
}

static int cmp_axis(const void *a, const void *b)
{
	const char *const *x = a, *const *y = b;

	return strcmp(x[0], y[0]);
}

static int render_header(struct text *t, const struct lkp_block *b)
{
	const char *(*ax)[2] = NULL;
	size_t nc = b->ncols;

	text_printf(t, "=========================================================================================\n");
	if (b->naxes > 0) {
		ax = calloc(b->naxes, sizeof(*ax));
		if (ax == NULL)
			return -1;
		for (size_t i = 0; i < b->naxes; i++) {
			ax[i][0] = b->axis_keys[i];
			ax[i][1] = b->axis_values[i];
		}
		qsort(ax, b->naxes, sizeof(*ax), cmp_axis);
		for (size_t i = 0; i < b->naxes; i++)
			text_printf(t, "%s%s", i ? "/" : "", ax[i][0]);
		text_printf(t, ":\n  ");
		for (size_t i = 0; i < b->naxes; i++)
			text_printf(t, "%s%s", i ? "/" : "", ax[i][1]);
		text_printf(t, "\n\n");
		free(ax);
	}
	text_printf(t, "commit: \n");
	for (size_t c = 0; c < nc; c++) {
		const struct lkp_kernel *k = &b->kernels[c];

		if (k->subject != NULL)
			text_printf(t, "  %.10s (\"%s\")\n", k->sha, k->subject);
		else
			text_printf(t, "  %s\n", k->sha);
	}
	text_printf(t, "\n%16.16s ", b->kernels[0].sha);
	for (size_t c = 1; c < nc; c++)
		text_printf(t, "%27.27s ", b->kernels[c].sha);
	text_printf(t, "\n---------------- ");
	for (size_t c = 1; c < nc; c++)
		text_printf(t, "--------------------------- ");
	text_printf(t, "\n");
	return 0;
}

static void render_section(struct text *t, const struct lkp_row *rows, size_t n,
			   int failure, size_t ntargets)
{
	char line[1024];
	int any = 0;

	for (size_t i = 0; i < n; i++) {
		int len;

		if (rows[i].failure != failure)
			continue;
		if (!any) {
			if (failure) {
				text_printf(t, "       fail:runs");
				for (size_t k = 0; k < ntargets; k++)
					text_printf(t, "  %%reproduction    fail:runs");
				text_printf(t, "\n           |    ");
				for (size_t k = 0; k < ntargets; k++)
					text_printf(t, "         |             |    ");
			} else {
				text_printf(t, "         %%stddev");
				for (size_t k = 0; k < ntargets; k++)
					text_printf(t, "     %%change         %%stddev");
				text_printf(t, "\n             \\  ");
				for (size_t k = 0; k < ntargets; k++)
					text_printf(t, "        |                \\  ");
			}
			text_printf(t, "\n");
			any = 1;
		}
		len = lkp_row_format(&rows[i], line, sizeof(line));
		if (len < 0) {
			t->failed = 1;
		} else if ((size_t)len < sizeof(line)) {
			text_add(t, line, (size_t)len);
		} else {
			char *big = malloc((size_t)len + 1);

			if (big == NULL || lkp_row_format(&rows[i], big, (size_t)len + 1) != len)
				t->failed = 1;
			else
				text_add(t, big, (size_t)len);
			free(big);
		}
	}
}

static int block_valid(const struct lkp_block *b)
{
	if (b == NULL || b->ncols < 2 || b->ncols > LKP_MAX_COLUMNS ||
	    b->kernels == NULL || b->runs == NULL || (b->nstats > 0 && b->stats == NULL) ||
	    (b->naxes > 0 && (b->axis_keys == NULL || b->axis_values == NULL)))
		return 0;
	for (size_t i = 0; i < b->naxes; i++)
		if (b->axis_keys[i] == NULL || b->axis_values[i] == NULL)
			return 0;
	for (size_t c = 0; c < b->ncols; c++)
		if (b->kernels[c].sha == NULL)
			return 0;
	for (size_t i = 0; i < b->nstats; i++)
		if (b->stats[i].name == NULL || b->stats[i].values == NULL ||
		    b->stats[i].nvalues == NULL)
			return 0;
	return 1;
}

int lkp_render(const struct lkp_block *b, char **out, size_t *len)
{
	struct text t = {NULL, 0, 0, 0};
	struct lkp_row *rows = NULL;
	size_t nrows = 0;
	int ret = -1, enough = 0;

	if (out == NULL)
		return -1;
	*out = NULL;
	if (!block_valid(b))
		return -1;
	for (size_t c = 0; c < b->ncols; c++)
		if (b->runs[c] >= LKP_MIN_RUNS)
			enough = 1;
	if (b->nstats > 0) {
		rows = calloc(b->nstats, sizeof(*rows));
		if (rows == NULL)
			goto out;
	}
	for (size_t i = 0; i < b->nstats; i++) {
		const struct lkp_stat *s = &b->stats[i];
		int show = s->always;

		for (size_t c = 1; enough && c < b->ncols && !show; c++) {
			int r = lkp_changed(s->name, b->suite, s->values[0], s->nvalues[0],
					    b->runs[0], s->values[c], s->nvalues[c], b->runs[c]);

			if (r < 0)
				goto out;
			show = r;
		}
		if (!show)
			continue;
		if (lkp_row_compute(&rows[nrows], s->name, b->ncols, s->values, s->nvalues,
				    b->runs) < 0)
			goto out;
		nrows++;
	}
	text_add(&t, "", 0);
	if (nrows > 0) {
		if (lkp_rows_sort(rows, nrows, b->suite) < 0 || render_header(&t, b) < 0)
			goto out;
		render_section(&t, rows, nrows, 1, b->ncols - 1);
		render_section(&t, rows, nrows, 0, b->ncols - 1);
		text_printf(&t, "\n");
	}
	if (t.failed)
		goto out;
	*out = t.s;
	if (len != NULL)
		*len = t.len;
	t.s = NULL;
	ret = 0;
out:
	free(t.s);
	free(rows);
	return ret;
}
