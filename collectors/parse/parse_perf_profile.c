/*
 * parse_perf_profile.c - `perf report --header` text (children/self rows and
 * folded call chains) into LKP's perf-profile metrics:
 * children.<event>.<sym>, self.<event>.<sym> and calltrace.<event>.<f1>...<f5>,
 * summed per name, rounded to 2 decimals, kept when >= 0.05 (LKP's rule).
 * The same rules name the rows of `run --profile` (perfmon.c), whose event
 * slot is always LKP's "cycles-pp"; its compiler-suffix rule also names
 * the callers of parse_perf_lock.c.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/buf.h"
#include "collectors/base/cutil.h"
#include "collectors/parse/parse.h"

#define PP_MAX_DEPTH 5

struct entry {
	char *name;
	double percent;
};

struct table {
	struct entry *e;
	size_t n, cap;
	size_t *slots; /* open addressing on name; nslots a power of 2 */
	size_t nslots;
};

static size_t hash(const char *s)
{
	size_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static void table_grow(struct table *t)
{
	size_t ns = t->nslots ? t->nslots * 2 : 1024;
	size_t *slots = xmalloc(ns * sizeof(size_t));

	for (size_t i = 0; i < ns; i++)
		slots[i] = SIZE_MAX;
	for (size_t i = 0; i < t->n; i++) {
		size_t h = hash(t->e[i].name) & (ns - 1);
		while (slots[h] != SIZE_MAX)
			h = (h + 1) & (ns - 1);
		slots[h] = i;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = ns;
}

static void table_add(struct table *t, const char *name, double percent)
{
	size_t h;

	if (2 * (t->n + 1) > t->nslots)
		table_grow(t);
	h = hash(name) & (t->nslots - 1);
	while (t->slots[h] != SIZE_MAX) {
		struct entry *e = &t->e[t->slots[h]];
		if (!strcmp(e->name, name)) {
			e->percent += percent;
			return;
		}
		h = (h + 1) & (t->nslots - 1);
	}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->e = xrealloc(t->e, t->cap * sizeof(*t->e));
	}
	t->e[t->n].name = xstrdup(name);
	t->e[t->n].percent = percent;
	t->slots[h] = t->n++;
}

static void table_release(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->e[i].name);
	free(t->e);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* Drop compiler suffixes: foo.isra.3 / .constprop.0 / .part.1 -> foo (all of them). */
void perf_symbol_fixup(const char *sym, size_t n, struct buf *out)
{
	static const char *const tags[] = {".isra.", ".constprop.", ".part.", NULL};
	size_t i = 0;

	while (i < n) {
		int cut = 0;
		for (const char *const *t = tags; *t && !cut; t++) {
			size_t tl = strlen(*t), j = i + tl;
			if (j < n && !strncmp(sym + i, *t, tl) && isdigit((unsigned char)sym[j])) {
				while (j < n && isdigit((unsigned char)sym[j]))
					j++;
				i = j;
				cut = 1;
			}
		}
		if (!cut)
			buf_putc(out, sym[i++]);
	}
}

/* "12.34%" -> 12.34; 0 or -1 when the field is not \d+\.\d+% */
static int percent_field(const char *f, double *out)
{
	const char *p = f;
	size_t n = strlen(f);

	if (n < 4 || f[n - 1] != '%')
		return -1;
	while (isdigit((unsigned char)*p))
		p++;
	if (p == f || *p != '.' || !isdigit((unsigned char)p[1]))
		return -1;
	for (p++; isdigit((unsigned char)*p); p++)
		;
	if (p != f + n - 1)
		return -1;
	return cparse_double_n(f, n - 1, out);
}

/* The event of "# Samples: 8K of event 'cycles:pp'" -> "cycles-pp"; 0 when found. */
static int event_of(const char *line, struct buf *event)
{
	const char *p = NULL, *rest;

	if (!strncmp(line, "# Events: ", 10))
		p = line + 10;
	else if (!strncmp(line, "# Samples: ", 11))
		p = line + 11;
	if (!p || !isdigit((unsigned char)*p))
		return -1;
	while (isdigit((unsigned char)*p))
		p++;
	if (!*p || !strchr("KMG ", *p))
		return -1;
	p++;
	if (!strncmp(line, "# Samples: ", 11)) {
		if (strncmp(p, " of event ", 10))
			return -1;
		rest = p + 10;
	} else {
		if (!isspace((unsigned char)*p))
			return -1;
		while (isspace((unsigned char)*p))
			p++;
		rest = p;
	}
	buf_reset(event);
	for (; *rest; rest++) {
		if (*rest == '\'')
			continue;
		buf_putc(event, *rest == ':' ? '-' : *rest);
	}
	return 0;
}

static void add_callchain(struct table *t, const char *event, double base, const char *chain)
{
	struct buf name = BUF_INIT;
	const char *p = chain;
	int depth = 0;

	buf_printf(&name, "calltrace.%s", event);
	/* Ruby's split(';') drops trailing empty fields; keep at most 5 levels. */
	while (*p && depth < PP_MAX_DEPTH) {
		const char *semi = strchr(p, ';');
		size_t n = semi ? (size_t)(semi - p) : strlen(p);
		const char *rest = semi ? semi + 1 : p + n;
		int only_empty = 1;
		for (const char *q = p; *q; q++)
			if (*q != ';')
				only_empty = 0;
		if (only_empty)
			break;
		buf_putc(&name, '.');
		perf_symbol_fixup(p, n, &name);
		depth++;
		p = rest;
	}
	table_add(t, buf_str(&name), base);
	buf_release(&name);
}

int perf_profile_event_of(const char *text, size_t len, char *out, size_t outsz)
{
	struct lines it;
	char *line;
	int rc = -1;

	lines_init(&it, text, len);
	while (rc && (line = lines_next(&it))) {
		const char *q = strstr(line, " of event '");
		if (!strncmp(line, "# Samples: ", 11) && q) {
			q += 11;
			snprintf(out, outsz, "%.*s", (int)strcspn(q, "'"), q);
			rc = 0;
		} else if (!strncmp(line, "# Events: ", 10)) {
			struct buf ev = BUF_INIT;
			if (!event_of(line, &ev)) {
				snprintf(out, outsz, "%s", buf_str(&ev));
				rc = 0;
			}
			buf_release(&ev);
		}
	}
	lines_release(&it);
	return rc;
}

int parse_perf_profile(struct parse_ctx *pc, const char *text, size_t len)
{
	return parse_perf_profile_as(pc, text, len, NULL);
}

int parse_perf_profile_as(struct parse_ctx *pc, const char *text, size_t len, const char *as_event)
{
	struct buf event = BUF_INIT, key = BUF_INIT;
	struct table t = {0};
	struct lines it;
	char *line;
	int rc = 0, have_event = 0;

	lines_init(&it, text, len);
	line = lines_next(&it);
	pc->line = 1;
	if (!line || (strcmp(line, "# ========") && !strstr(line, " --header"))) {
		rc = parse_fail(pc, "not a `perf report --header` output");
		goto out;
	}
	while ((line = lines_next(&it))) {
		if (!event_of(line, &event)) {
			have_event = 1;
			break;
		}
	}
	if (have_event && as_event) {
		buf_reset(&event);
		buf_puts(&event, as_event);
	}
	/* After the first event every "# " line is skipped, as in LKP's parser. */
	while (have_event && (line = lines_next(&it))) {
		char *f[8];
		size_t nf;
		double children, self, base;
		int starts_digit;

		pc->line = it.no;
		if (!strncmp(line, "# ", 2))
			continue;
		starts_digit = isdigit((unsigned char)line[0]);
		nf = split_ws(line, f, 8);
		if ((nf == 5 || nf == 7) && !percent_field(f[0], &children) &&
		    !percent_field(f[1], &self)) {
			buf_reset(&key);
			buf_printf(&key, "children.%s.", buf_str(&event));
			perf_symbol_fixup(f[4], strlen(f[4]), &key);
			table_add(&t, buf_str(&key), children);
			buf_reset(&key);
			buf_printf(&key, "self.%s.", buf_str(&event));
			perf_symbol_fixup(f[4], strlen(f[4]), &key);
			table_add(&t, buf_str(&key), self);
		} else if (starts_digit && nf == 2 && !percent_field(f[0], &base)) {
			add_callchain(&t, buf_str(&event), base, f[1]);
		}
	}
	if (t.n)
		qsort(t.e, t.n, sizeof(*t.e), by_name);
	for (size_t i = 0; i < t.n; i++) {
		char num[64];
		double v;
		if (!(t.e[i].percent >= 0.05))
			continue;
		snprintf(num, sizeof(num), "%.2f", t.e[i].percent);
		if (!cparse_double(num, &v))
			parse_metric(pc, t.e[i].name, v);
	}
out:
	table_release(&t);
	buf_release(&event);
	buf_release(&key);
	lines_release(&it);
	return rc;
}
