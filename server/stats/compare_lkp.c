/*
 * compare_lkp.c - LKP blocks from grouped samples: the axes are the test
 * params, the variant knobs, tbox_group and testcase; stats are per-run means,
 * rendered (and filtered by LKP's rule) by stats_lkp.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "server/stats/compare_lkp.h"
#include "lib/metric_role.h"
#include "lib/util.h"

static int same_block(const struct cmp_key *a, const struct cmp_key *b)
{
	return !strcmp(a->machine, b->machine) && !strcmp(a->suite, b->suite) &&
	       !strcmp(a->params, b->params) && !strcmp(a->variant, b->variant);
}

/* One LKP block: keys [from, to) share machine, test and variant. */
static void lkp_block(const struct cmp_set *set, const struct lkp_kernel *kernels, size_t from,
		      size_t to, struct buf *out)
{
	size_t nk = to - from, ncols = set->nsides, naxes = 0;
	json_t *params = json_loads(set->keys[from]->params, 0, NULL);
	json_t *variant = json_loads(set->keys[from]->variant, 0, NULL);
	const char **axis_keys = xcalloc(json_object_size(params) + json_object_size(variant) + 2,
					 sizeof(char *));
	const char **axis_values = xcalloc(json_object_size(params) + json_object_size(variant) + 2,
					   sizeof(char *));
	size_t runs[COMPARE_SIDES_MAX] = {0};
	struct lkp_stat *stats = xcalloc(nk, sizeof(*stats));
	const double **values = xcalloc(nk * ncols, sizeof(double *));
	size_t *nvalues = xcalloc(nk * ncols, sizeof(size_t));
	const char *key;
	json_t *v;
	char *text = NULL;
	int targets_ran = 0, enough = 0;

	json_object_foreach(params, key, v) {
		axis_keys[naxes] = key;
		axis_values[naxes++] = json_string_value(v);
	}
	json_object_foreach(variant, key, v) {
		axis_keys[naxes] = key;
		axis_values[naxes++] = json_string_value(v);
	}
	axis_keys[naxes] = "tbox_group";
	axis_values[naxes++] = set->keys[from]->machine;
	axis_keys[naxes] = "testcase";
	axis_values[naxes++] = set->keys[from]->suite;
	for (size_t i = 0; i < nk; i++) {
		const struct cmp_key *k = set->keys[from + i];
		for (size_t c = 0; c < ncols; c++) {
			values[i * ncols + c] = k->cell[c].run_means;
			nvalues[i * ncols + c] = k->cell[c].nruns;
			if (k->cell[c].nruns > runs[c])
				runs[c] = k->cell[c].nruns;
		}
		stats[i].name = k->metric;
		stats[i].values = values + i * ncols;
		stats[i].nvalues = nvalues + i * ncols;
		stats[i].always = metric_role(k->metric, k->suite) == ROLE_KPI;
	}
	for (size_t c = 1; c < ncols; c++) {
		targets_ran |= runs[c] > 0;
		enough |= runs[c] >= LKP_MIN_RUNS;
	}
	enough |= runs[0] >= LKP_MIN_RUNS;
	if (runs[0] && targets_ran && !enough) {
		buf_printf(out, "# %s on %s: LKP's changed-stat rule needs %d runs on a side;"
				" the base has %zu", set->keys[from]->suite, set->keys[from]->machine,
			   LKP_MIN_RUNS, runs[0]);
		for (size_t c = 1; c < ncols; c++)
			buf_printf(out, ", %s %zu", ncols > 2 ? "a target" : "the target", runs[c]);
		buf_puts(out, ". Only the KPI rows are shown, unjudged.\n");
	}
	if (runs[0] && targets_ran) {
		struct lkp_block b = {naxes, axis_keys, axis_values, ncols, kernels, runs,
				      set->keys[from]->suite, nk, stats};
		if (lkp_render(&b, &text, NULL) == 0)
			buf_puts(out, text);
		free(text);
	}
	free(values);
	free(nvalues);
	free(stats);
	free(axis_keys);
	free(axis_values);
	json_decref(params);
	json_decref(variant);
}

void cmp_render_lkp(const struct cmp_set *set, const struct lkp_kernel *kernels, struct buf *out)
{
	size_t from = 0;

	for (size_t i = 1; i <= set->nkeys; i++) {
		if (i < set->nkeys && same_block(set->keys[from], set->keys[i]))
			continue;
		if (set->nkeys)
			lkp_block(set, kernels, from, i, out);
		from = i;
	}
}
