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

#include "compare.h"
#include "stats_lkp.h"
#include "util.h"

void cmp_set_init(struct cmp_set *s, size_t nsides)
{
	memset(s, 0, sizeof(*s));
	s->nsides = nsides;
}

static void key_free(struct cmp_key *k)
{
	free(k->machine);
	free(k->suite);
	free(k->params);
	free(k->variant);
	free(k->metric);
	for (int i = 0; i < COMPARE_SIDES_MAX; i++) {
		free(k->cell[i].samples);
		free(k->cell[i].run_means);
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
		free(s->metrics[i].name);
	free(s->metrics);
	memset(s, 0, sizeof(*s));
}

static uint64_t hash_fields(const char *const *f)
{
	uint64_t h = 1469598103934665603ull;
	for (int i = 0; i < 5; i++) {
		for (const char *p = f[i]; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ull;
		h = (h ^ 0x1f) * 1099511628211ull;
	}
	return h;
}

static int key_equal(const struct cmp_key *k, const char *const *f)
{
	return !strcmp(k->metric, f[4]) && !strcmp(k->machine, f[0]) && !strcmp(k->suite, f[1]) &&
	       !strcmp(k->params, f[2]) && !strcmp(k->variant, f[3]);
}

static void rehash(struct cmp_set *s)
{
	size_t n = s->nbuckets ? s->nbuckets * 2 : 1024;

	free(s->buckets);
	s->buckets = xcalloc(n, sizeof(*s->buckets));
	s->nbuckets = n;
	for (size_t i = 0; i < s->nkeys; i++) {
		const struct cmp_key *k = s->keys[i];
		const char *f[5] = {k->machine, k->suite, k->params, k->variant, k->metric};
		size_t b = hash_fields(f) & (n - 1);
		while (s->buckets[b])
			b = (b + 1) & (n - 1);
		s->buckets[b] = i + 1;
	}
}

struct cmp_key *cmp_set_key(struct cmp_set *s, const char *machine, const char *suite,
			    const char *params, const char *variant, const char *metric,
			    enum direction direction)
{
	const char *f[5] = {machine, suite, params, variant, metric};
	struct cmp_key *k;
	size_t b;

	if ((s->nkeys + 1) * 2 > s->nbuckets)
		rehash(s);
	b = hash_fields(f) & (s->nbuckets - 1);
	while (s->buckets[b]) {
		k = s->keys[s->buckets[b] - 1];
		if (key_equal(k, f)) {
			if (k->direction == DIR_NONE)
				k->direction = direction;
			return k;
		}
		b = (b + 1) & (s->nbuckets - 1);
	}
	k = xcalloc(1, sizeof(*k));
	k->machine = xstrdup(machine);
	k->suite = xstrdup(suite);
	k->params = xstrdup(params);
	k->variant = xstrdup(variant);
	k->metric = xstrdup(metric);
	k->direction = direction;
	if (s->nkeys == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->keys = xrealloc(s->keys, s->cap * sizeof(*s->keys));
	}
	s->keys[s->nkeys++] = k;
	s->buckets[b] = s->nkeys;
	return k;
}

void cmp_cell_add_run(struct cmp_cell *c, const double *values, size_t n)
{
	if (!n)
		return;
	if (c->n + n > c->cap) {
		while (c->n + n > c->cap)
			c->cap = c->cap ? c->cap * 2 : 8;
		c->samples = xrealloc(c->samples, c->cap * sizeof(double));
	}
	memcpy(c->samples + c->n, values, n * sizeof(double));
	c->n += n;
	if (c->nruns == c->runcap) {
		c->runcap = c->runcap ? c->runcap * 2 : 4;
		c->run_means = xrealloc(c->run_means, c->runcap * sizeof(double));
	}
	c->run_means[c->nruns++] = stats_mean(values, n);
}

static int key_cmp(const void *a, const void *b)
{
	const struct cmp_key *x = *(const struct cmp_key *const *)a;
	const struct cmp_key *y = *(const struct cmp_key *const *)b;
	int r;

	if ((r = strcmp(x->machine, y->machine)) || (r = strcmp(x->suite, y->suite)) ||
	    (r = strcmp(x->params, y->params)) || (r = strcmp(x->variant, y->variant)))
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

static void side_of(const struct cmp_cell *c, struct cmp_side *out)
{
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
	if (!b->n || !c->n)
		return -1;
	row->key = k;
	row->target = t;
	side_of(b, &row->base);
	side_of(c, &row->tgt);
	row->change_abs = row->tgt.mean - row->base.mean;
	row->change_pct = row->base.mean != 0 ? 100.0 * row->change_abs / fabs(row->base.mean)
					      : NAN;
	row->absolute = lkp_is_absolute(k->metric);
	row->welch_ok = b->n >= 2 && c->n >= 2 &&
			stats_welch(b->samples, b->n, c->samples, c->n, 0.95, &row->welch) == 0;
	row->lkp_changed = lkp_changed(k->metric, k->suite, b->run_means, b->nruns, b->nruns,
				       c->run_means, c->nruns, c->nruns) == 1;
	row->verdict = cmp_verdict(row, k->direction);
	return 0;
}
