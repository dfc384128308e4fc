/*
 * compare.c - grouping samples by trend key (a small open-addressing hash
 * table over the key strings) and the numbers of each compare row. The
 * verdict here is kperf's: a floor on the size of the change, then Welch's
 * CI (LKP's range rule when a side has fewer than 3 samples).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "server/stats/compare.h"
#include "server/stats/stats_lkp.h"
#include "lib/util.h"

void cmp_set_init(struct cmp_set *s, size_t nsides)
{
	memset(s, 0, sizeof(*s));
	s->nsides = nsides;
}

static void key_free(struct cmp_key *k)
{
	free(k->metric);
	for (int i = 0; i < COMPARE_SIDES_MAX; i++) {
		free(k->cell[i].samples);
		free(k->cell[i].run_means);
		free(k->cell[i].arch);
	}
	free(k);
}

void cmp_set_release(struct cmp_set *s)
{
	for (size_t i = 0; i < s->nkeys; i++)
		key_free(s->keys[i]);
	free(s->keys);
	free(s->buckets);
	for (size_t i = 0; i < s->nmetrics; i++)
		if (s->metrics[i].owned)
			free((char *)s->metrics[i].name);
	free(s->metrics);
	for (size_t i = 0; i < s->nprefixes; i++) {
		struct cmp_prefix *p = s->prefixes[i];
		free(p->machine);
		free(p->suite);
		free(p->params);
		free(p->variant);
		free(p);
	}
	free(s->prefixes);
	memset(s, 0, sizeof(*s));
}

#define FNV_OFFSET 1469598103934665603ull
#define FNV_PRIME 1099511628211ull

/* FNV-1a of s continued from h, then a separator */
static uint64_t hash_more(uint64_t h, const char *s)
{
	for (const char *p = s; *p; p++)
		h = (h ^ (unsigned char)*p) * FNV_PRIME;
	return (h ^ 0x1f) * FNV_PRIME;
}

const struct cmp_prefix *cmp_set_prefix(struct cmp_set *s, const char *machine,
					const char *suite, const char *params, const char *variant)
{
	const char *f[4] = {machine, suite, params, variant};
	struct cmp_prefix *p;

	for (size_t i = s->nprefixes; i-- > 0;) { /* the newest first */
		p = s->prefixes[i];
		if (!strcmp(p->machine, machine) && !strcmp(p->suite, suite) &&
		    !strcmp(p->params, params) && !strcmp(p->variant, variant))
			return p;
	}
	p = xcalloc(1, sizeof(*p));
	p->machine = xstrdup(machine);
	p->suite = xstrdup(suite);
	p->params = xstrdup(params);
	p->variant = xstrdup(variant);
	p->hash = FNV_OFFSET;
	for (int i = 0; i < 4; i++)
		p->hash = hash_more(p->hash, f[i]);
	s->prefixes = xrealloc(s->prefixes, (s->nprefixes + 1) * sizeof(*s->prefixes));
	s->prefixes[s->nprefixes++] = p;
	return p;
}

static void rehash(struct cmp_set *s)
{
	size_t n = s->nbuckets ? s->nbuckets * 2 : 1024;

	free(s->buckets);
	s->buckets = xcalloc(n, sizeof(*s->buckets));
	s->nbuckets = n;
	for (size_t i = 0; i < s->nkeys; i++) {
		size_t b = s->keys[i]->hash & (n - 1);
		while (s->buckets[b])
			b = (b + 1) & (n - 1);
		s->buckets[b] = i + 1;
	}
}

struct cmp_key *cmp_set_key(struct cmp_set *s, const char *machine, const char *suite,
			    const char *params, const char *variant, const char *metric,
			    enum direction direction)
{
	return cmp_set_key_in(s, cmp_set_prefix(s, machine, suite, params, variant), metric,
			      direction);
}

struct cmp_key *cmp_set_key_in(struct cmp_set *s, const struct cmp_prefix *p, const char *metric,
			       enum direction direction)
{
	uint64_t h = hash_more(p->hash, metric);
	struct cmp_key *k;
	size_t b;

	if ((s->nkeys + 1) * 2 > s->nbuckets)
		rehash(s);
	b = h & (s->nbuckets - 1);
	while (s->buckets[b]) {
		k = s->keys[s->buckets[b] - 1];
		if (k->hash == h && k->prefix == p && !strcmp(k->metric, metric)) {
			if (k->direction == DIR_NONE)
				k->direction = direction;
			return k;
		}
		b = (b + 1) & (s->nbuckets - 1);
	}
	k = xcalloc(1, sizeof(*k));
	k->prefix = p;
	k->machine = p->machine;
	k->suite = p->suite;
	k->params = p->params;
	k->variant = p->variant;
	k->metric = xstrdup(metric);
	k->hash = h;
	k->direction = direction;
	if (s->nkeys == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->keys = xrealloc(s->keys, s->cap * sizeof(*s->keys));
	}
	s->keys[s->nkeys++] = k;
	s->buckets[b] = s->nkeys;
	return k;
}

static void add_run_mean(struct cmp_cell *c, double mean)
{
	if (c->nruns == c->runcap) {
		c->runcap = c->runcap ? c->runcap * 2 : 4;
		c->run_means = xrealloc(c->run_means, c->runcap * sizeof(double));
	}
	c->run_means[c->nruns++] = mean;
}

void cmp_cell_add_run(struct cmp_cell *c, const double *values, size_t n)
{
	if (!n)
		return;
	if (c->n + n > c->cap) {
		/* room for a few runs like this one at first: most cells get 3-5 */
		if (!c->cap)
			c->cap = n < 2 ? 8 : n <= 64 ? 4 * n : n;
		while (c->n + n > c->cap)
			c->cap *= 2;
		c->samples = xrealloc(c->samples, c->cap * sizeof(double));
	}
	memcpy(c->samples + c->n, values, n * sizeof(double));
	c->n += n;
	add_run_mean(c, stats_mean(values, n));
}

void cmp_cell_add_summary(struct cmp_cell *c, const struct stats_moments *m)
{
	if (!m->n)
		return;
	if (!c->arch)
		c->arch = xcalloc(1, sizeof(*c->arch));
	stats_moments_merge(c->arch, m);
	add_run_mean(c, m->mean);
}

static int key_cmp(const void *a, const void *b)
{
	const struct cmp_key *x = *(const struct cmp_key *const *)a;
	const struct cmp_key *y = *(const struct cmp_key *const *)b;
	int r;

	if (x->prefix != y->prefix &&
	    ((r = strcmp(x->machine, y->machine)) || (r = strcmp(x->suite, y->suite)) ||
	     (r = strcmp(x->params, y->params)) || (r = strcmp(x->variant, y->variant))))
		return r;
	return strcmp(x->metric, y->metric);
}

void cmp_set_sort(struct cmp_set *s)
{
	if (!s->nkeys)
		return;
	qsort(s->keys, s->nkeys, sizeof(*s->keys), key_cmp);
	rehash(s);
}

void cmp_cell_moments(const struct cmp_cell *c, struct stats_moments *out)
{
	stats_moments_of(c->samples, c->n, out);
	if (c->arch)
		stats_moments_merge(out, c->arch);
}

static void side_of(const struct cmp_cell *c, struct cmp_side *out)
{
	if (c->arch) { /* archived runs: from the moments */
		struct stats_moments m;
		cmp_cell_moments(c, &m);
		out->n = m.n;
		out->mean = m.mean;
		out->stddev_pct = m.n > 1 ? stats_moments_cv(&m) : 0;
		out->min = m.min;
		out->max = m.max;
		return;
	}
	out->n = c->n;
	out->mean = stats_mean(c->samples, c->n);
	out->stddev_pct = c->n > 1 ? stats_cv(c->samples, c->n) : 0;
	out->min = stats_min(c->samples, c->n);
	out->max = stats_max(c->samples, c->n);
}

const char *verdict_name(enum verdict v)
{
	switch (v) {
	case VERDICT_REGRESSION:
		return "regression";
	case VERDICT_IMPROVEMENT:
		return "improvement";
	case VERDICT_CHANGED:
		return "changed";
	default:
		return "noise";
	}
}

enum verdict cmp_verdict(const struct cmp_row *row, enum direction d)
{
	const char *name = row->key->metric;
	double size, floor;
	int real, better;

	/* The floor: 1 percentage point for absolute rows, 1% for benchmark
	 * KPIs and performance monitors, 5% for other monitors (LKP's). */
	if (row->absolute) {
		size = fabs(row->change_abs);
		floor = 1.0;
	} else {
		size = fabs(row->change_pct);
		floor = lkp_is_perf_metric(name, row->key->suite) ? 1.0 : 5.0;
	}
	if (!(size >= floor)) /* NaN too: a zero base mean */
		return VERDICT_NOISE;
	if (row->base.n < 3 && row->tgt.n < 3)
		return VERDICT_NOISE;
	if (row->base.n < 3 || row->tgt.n < 3 || !row->welch_ok)
		real = row->lkp_changed == 1;
	else
		real = row->welch.ci_lo > 0 || row->welch.ci_hi < 0;
	if (!real)
		return VERDICT_NOISE;
	if (d == DIR_NONE)
		return VERDICT_CHANGED;
	better = (d == DIR_HIGHER) == (row->change_abs > 0);
	return better ? VERDICT_IMPROVEMENT : VERDICT_REGRESSION;
}

int cmp_row_compute(const struct cmp_key *k, int t, struct cmp_row *row)
{
	const struct cmp_cell *b = &k->cell[0], *c = &k->cell[t];

	memset(row, 0, sizeof(*row));
	if (!cmp_cell_count(b) || !cmp_cell_count(c))
		return -1;
	row->key = k;
	row->target = t;
	side_of(b, &row->base);
	side_of(c, &row->tgt);
	row->change_abs = row->tgt.mean - row->base.mean;
	row->change_pct = row->base.mean != 0 ? 100.0 * row->change_abs / fabs(row->base.mean)
					      : NAN;
	row->absolute = lkp_is_absolute(k->metric);
	if (b->arch || c->arch) {
		struct stats_moments mb, mc;
		cmp_cell_moments(b, &mb);
		cmp_cell_moments(c, &mc);
		row->welch_ok = stats_welch_moments(&mb, &mc, 0.95, &row->welch) == 0;
	} else {
		row->welch_ok = b->n >= 2 && c->n >= 2 &&
				stats_welch(b->samples, b->n, c->samples, c->n, 0.95,
					    &row->welch) == 0;
	}
	row->lkp_changed = lkp_changed(k->metric, k->suite, b->run_means, b->nruns, b->nruns,
				       c->run_means, c->nruns, c->nruns) == 1;
	row->verdict = cmp_verdict(row, k->direction);
	return 0;
}
