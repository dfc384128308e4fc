/*
 * parse_perf_lock.c - `perf lock contention` output (by caller, perf 6.1
 * and later; the table perf prints on stderr) into perf-lock.<caller>.
 * {contended, wait_total_us, wait_max_us, wait_avg_us}, the same per lock
 * type (perf-lock.type.<type>.*, ':' in a type as '-') and over all locks
 * (perf-lock.total.*), lower is better. perf prints a row per call stack,
 * so one caller may have many rows: counts and totals add up, the max is
 * the largest, the average is weighted by the counts.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"

/*
 * Callers kept per output, the longest total wait first: a run stays far
 * below the server's 10,000 metrics (4 each) whatever the machine's size.
 */
#define PERF_LOCK_CALLERS_MAX 200

/* The wait columns perf can print, in the names of their metrics. */
enum col { COL_TOTAL, COL_MAX, COL_MIN, COL_AVG, NCOLS };
static const char *const col_word[NCOLS] = {"total", "max", "min", "avg"};

struct agg {
	char *name;
	double contended, total_us, max_us, avg_sum; /* avg_sum: avg x count, summed */
};

struct aggs {
	struct agg *a;
	size_t n, cap;
};

static struct agg *agg_of(struct aggs *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->a[i].name, name))
			return &s->a[i];
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->a = xrealloc(s->a, s->cap * sizeof(*s->a));
	}
	memset(&s->a[s->n], 0, sizeof(s->a[0]));
	s->a[s->n].name = xstrdup(name);
	return &s->a[s->n++];
}

static void agg_add(struct agg *g, double n, double total, double max, double avg)
{
	g->contended += n;
	g->total_us += total;
	if (max > g->max_us)
		g->max_us = max;
	g->avg_sum += avg * n;
}

static void aggs_release(struct aggs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->a[i].name);
	free(s->a);
	memset(s, 0, sizeof(*s));
}

static int by_wait(const void *x, const void *y)
{
	const struct agg *a = x, *b = y;
	if (a->total_us != b->total_us)
		return a->total_us < b->total_us ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* Microseconds rounded to nanoseconds: 2.90 ms is 2900 us, not 2900.0000000000005. */
static double us(double v)
{
	return round(v * 1000.0) / 1000.0;
}

/* "<number>" "<unit>" in microseconds; 0 or -1. */
static int wait_us(char *num, const char *unit, double *out)
{
	static const struct {
		const char *unit;
		double us;
	} units[] = {{"ns", 1e-3}, {"us", 1}, {"ms", 1e3}, {"s", 1e6}, {"m", 60e6}, {"h", 3600e6}};
	double v;

	if (cparse_double(num, &v) || v < 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(unit, units[i].unit)) {
			*out = us(v * units[i].us);
			return 0;
		}
	}
	return -1;
}

/*
 * The header " contended   total wait     max wait     avg wait   type   caller"
 * into cols (the order of the wait columns); returns their number, 0 when the
 * line is not a header, -1 (message set) for a header of another form.
 */
static int header(struct parse_ctx *pc, char *line, enum col *cols)
{
	char *f[32];
	size_t nf = split_ws(line, f, 32), i;
	int n = 0;

	if (nf < 1 || strcmp(f[0], "contended"))
		return 0;
	for (i = 1; i + 1 < nf && !strcmp(f[i + 1], "wait"); i += 2) {
		int c;
		for (c = 0; c < NCOLS && strcmp(f[i], col_word[c]); c++)
			;
		if (c == NCOLS || n == NCOLS)
			return parse_fail(pc, "unknown column \"%s wait\"", f[i]);
		cols[n++] = (enum col)c;
	}
	if (i + 2 != nf || strcmp(f[i], "type") || strcmp(f[i + 1], "caller"))
		return parse_fail(pc, "expected the by-caller table (\"... type caller\"); this is "
				      "another form (perf lock contention -t or -l?)");
	for (int c = 0; c < n; c++)
		if (cols[c] == COL_TOTAL)
			return n;
	return parse_fail(pc, "the header has no \"total wait\" column");
}

/* "folio_batch_move_lru+0x88" -> "folio_batch_move_lru"; an address -> "unknown". */
static void caller_name(const char *field, struct buf *out)
{
	size_t n = strcspn(field, "+");

	buf_reset(out);
	if (!n || (field[0] == '0' && field[1] == 'x') || field[0] == '[') {
		buf_puts(out, "unknown");
		return;
	}
	perf_symbol_fixup(field, n, out);
}

static void emit(struct parse_ctx *pc, const char *prefix, const struct agg *g)
{
	struct buf k = BUF_INIT;
	static const char *const what[] = {"contended", "wait_total_us", "wait_max_us",
					   "wait_avg_us"};
	double v[4] = {g->contended, us(g->total_us), us(g->max_us),
		       g->contended > 0 ? us(g->avg_sum / g->contended) : NAN};

	for (int i = 0; i < 4; i++) {
		if (isnan(v[i]))
			continue;
		buf_reset(&k);
		buf_printf(&k, "%s%s%s.%s", prefix, *prefix ? "." : "", g->name, what[i]);
		parse_metric_as(pc, buf_str(&k), v[i], i ? "us" : NULL, "lower");
	}
	buf_release(&k);
}

int parse_perf_lock(struct parse_ctx *pc, const char *text, size_t len)
{
	struct aggs callers = {0}, types = {0};
	struct agg total = {.name = "total"};
	struct buf name = BUF_INIT;
	enum col cols[NCOLS];
	int ncols = 0, rc = 0, in_rows = 0, has[NCOLS] = {0, 0, 0, 0};
	size_t header_line = 0;
	struct lines it;
	char *line;

	lines_init(&it, text, len);
	while ((line = lines_next(&it))) {
		pc->line = it.no;
		if (!ncols) {
			if ((ncols = header(pc, line, cols)) < 0) {
				rc = -1;
				goto out;
			}
			for (int c = 0; c < ncols; c++)
				has[cols[c]] = 1;
			header_line = it.no;
			continue;
		}
		{
			char *f[32];
			size_t nf = split_ws(line, f, 32);
			double v[NCOLS] = {0, 0, 0, 0}, n;
			int64_t cnt;
			char *t;

			if (!nf) {
				if (in_rows)
					break;
				continue;
			}
			if (!strncmp(f[0], "===", 3))
				break;
			in_rows = 1;
			if (nf != (size_t)(1 + 2 * ncols + 2)) {
				rc =
				    parse_fail(pc,
					       "expected %d fields (contended, %d waits with their "
					       "units, type, caller), found %zu",
					       1 + 2 * ncols + 2, ncols, nf);
				goto out;
			}
			if (cparse_int64(f[0], 0, INT64_MAX / 2, &cnt)) {
				rc = parse_fail(pc, "contended \"%.40s\" is not a count", f[0]);
				goto out;
			}
			n = (double)cnt;
			for (int c = 0; c < ncols; c++) {
				if (wait_us(f[1 + 2 * c], f[2 + 2 * c], &v[cols[c]])) {
					rc = parse_fail(pc, "%s wait \"%.40s %.8s\" is not a time",
							col_word[cols[c]], f[1 + 2 * c],
							f[2 + 2 * c]);
					goto out;
				}
			}
			/* perf versions that print no max or avg: what the total implies */
			if (!has[COL_AVG])
				v[COL_AVG] = n > 0 ? v[COL_TOTAL] / n : 0;
			if (!has[COL_MAX])
				v[COL_MAX] = v[COL_AVG];
			caller_name(f[nf - 1], &name);
			agg_add(agg_of(&callers, buf_str(&name)), n, v[COL_TOTAL], v[COL_MAX],
				v[COL_AVG]);
			for (t = f[nf - 2]; *t; t++)
				if (*t == ':')
					*t = '-';
			agg_add(agg_of(&types, f[nf - 2]), n, v[COL_TOTAL], v[COL_MAX], v[COL_AVG]);
			agg_add(&total, n, v[COL_TOTAL], v[COL_MAX], v[COL_AVG]);
		}
	}
	if (ncols && it.no == header_line) {
		rc = parse_fail(pc, "the output ends at the header (cut?)");
		goto out;
	}
	if (!ncols) {
		pc->line = 1;
		rc =
		    parse_fail(pc, "not `perf lock contention` output: no \"contended ... caller\" "
				   "header");
		goto out;
	}
	if (callers.n)
		qsort(callers.a, callers.n, sizeof(*callers.a), by_wait);
	for (size_t i = 0; i < callers.n && i < PERF_LOCK_CALLERS_MAX; i++)
		emit(pc, "", &callers.a[i]);
	for (size_t i = 0; i < types.n; i++)
		emit(pc, "type", &types.a[i]);
	emit(pc, "", &total);
out:
	aggs_release(&callers);
	aggs_release(&types);
	buf_release(&name);
	lines_release(&it);
	return rc;
}
