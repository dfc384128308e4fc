/*
 * compare_text.c - the text answers of GET /api/v1/compare: LKP's ncompare
 * blocks and mmtests' compare-kernels tables (both rendered by the stats
 * library from the loaded samples), and CSV for spreadsheets.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/stats/compare_lkp.h"
#include "lib/metric_role.h"
#include "server/stats/stats_lkp.h"
#include "server/stats/stats_mmtests.h"
#include "lib/util.h"
#include "api/compare_req.h"

void compare_render_lkp(const struct compare_req *q, struct buf *out)
{
	struct lkp_kernel kernels[COMPARE_SIDES_MAX];

	for (int c = 0; c < q->nrefs; c++) {
		kernels[c].sha = q->refs[c].sha;
		kernels[c].subject = q->refs[c].subject;
	}
	cmp_render_lkp(&q->set, kernels, out);
}

/* ---- mmtests ---- */

struct mm_entry {
	int order;     /* KPIs first, the headline's kind first (metric_role.h) */
	char *group;   /* machine, suite, params without the operand, variant, metric */
	char *operand; /* the operand's value, or NULL: the metric's last part */
	const struct cmp_key *key;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct mm_entry *x = a, *y = b;

	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return strcmp(x->group, y->group);
}

/* Where a metric's tables go: KPIs by rank, then events, info, monitors. */
static int entry_order(const struct cmp_key *k)
{
	int rank = metric_kpi_rank(k->metric, k->suite);

	return rank >= 0 ? rank : 100 + (int)metric_role(k->metric, k->suite);
}

static const char *default_operand(json_t *params)
{
	static const char *const names[] = {"nr_threads", "threads", "clients", NULL};
	for (const char *const *n = names; *n; n++)
		if (json_object_get(params, *n))
			return *n;
	return NULL;
}

static void mm_table(const struct compare_req *q, struct mm_entry *e, size_t n, int titled,
		     int shared, struct buf *out)
{
	size_t nk = (size_t)q->nrefs;
	const char **operands = xcalloc(n, sizeof(char *));
	const double **samples = xcalloc(n * nk, sizeof(double *));
	size_t *nsamples = xcalloc(n * nk, sizeof(size_t));
	const struct stats_moments **archived = xcalloc(n * nk, sizeof(*archived));
	int partial = 0;
	const char *kernels[COMPARE_SIDES_MAX];
	char title[600];
	char *text = NULL;

	for (size_t k = 0; k < nk; k++)
		kernels[k] = q->refs[k].text;
	for (size_t i = 0; i < n; i++) {
		operands[i] = e[i].operand ? e[i].operand : mmtests_default_operand(e[i].key->metric);
		for (size_t k = 0; k < nk; k++) {
			samples[i * nk + k] = e[i].key->cell[k].samples;
			nsamples[i * nk + k] = e[i].key->cell[k].n;
			if (e[i].key->cell[k].arch) {
				archived[i * nk + k] = e[i].key->cell[k].arch;
				partial = 1;
			}
		}
	}
	/* mmtests titles "<suite> <metric>"; tables that would share a title
	 * also name what tells them apart */
	if (shared) {
		const char *rest = strchr(strchr(e[0].group, '\x1f') + 1, '\x1f') + 1;
		snprintf(title, sizeof(title), "%s %s (%s %.*s %s)", e[0].key->suite, e[0].key->metric,
			 e[0].key->machine, (int)strcspn(rest, "\x1f"), rest, e[0].key->variant);
	} else {
		snprintf(title, sizeof(title), "%s %s", e[0].key->suite, e[0].key->metric);
	}
	{
		struct mmtests_table t = {titled ? title : NULL,
					  e[0].key->direction == DIR_LOWER ? MMTESTS_LOWER
									   : MMTESTS_HIGHER,
					  nk, kernels, n, operands, samples, nsamples, archived};
		if (mmtests_render(&t, &text, NULL) == 0) {
			buf_puts(out, text);
			if (partial)
				buf_puts(out, "(B?mean rows: NaN where runs of archived months are"
					      " summarised; their values are not kept)\n");
			buf_putc(out, '\n');
		}
	}
	free(text);
	free(operands);
	free(samples);
	free(nsamples);
	free(archived);
}

int compare_render_mmtests(const struct compare_req *q, struct buf *out, char *err,
			   size_t errlen)
{
	struct mm_entry *e = xcalloc(q->set.nkeys + 1, sizeof(*e));
	size_t n = 0, from = 0, ntables = 0;
	int found_operand = q->operand == NULL;

	for (size_t i = 0; i < q->set.nkeys; i++) {
		const struct cmp_key *k = q->set.keys[i];
		json_t *params = json_loads(k->params, 0, NULL);
		const char *op = q->operand ? q->operand : default_operand(params);
		json_t *opv = op ? json_object_get(params, op) : NULL;
		struct buf g = BUF_INIT;
		char *rest;

		if (!cmp_cell_count(&k->cell[0]) ||
		    (!q->metric_glob && metric_role(k->metric, k->suite) == ROLE_MONITOR)) {
			json_decref(params);
			continue; /* the baseline must have run it; monitors when asked for */
		}
		e[n].order = entry_order(k);
		if (opv) {
			found_operand = 1;
			e[n].operand = xstrdup(json_string_value(opv));
			json_object_del(params, op);
		}
		rest = json_dumps(params, JSON_SORT_KEYS | JSON_COMPACT);
		buf_printf(&g, "%s\x1f%s\x1f%s\x1f%s\x1f%s", k->machine, k->suite, rest, k->variant,
			   k->metric);
		free(rest);
		e[n].group = buf_detach(&g, NULL);
		e[n].key = k;
		n++;
		json_decref(params);
	}
	if (!found_operand) {
		snprintf(err, errlen, "no run has a param named \"%s\"", q->operand);
		goto out;
	}
	qsort(e, n, sizeof(*e), entry_cmp);
	for (size_t i = 1; i <= n; i++) {
		if (i < n && !strcmp(e[i].group, e[from].group))
			continue;
		ntables++;
		from = i;
	}
	from = 0;
	for (size_t i = 1; i <= n; i++) {
		int shared = 0;
		if (i < n && !strcmp(e[i].group, e[from].group))
			continue;
		for (size_t j = 0; j < n && !shared; j++)
			shared = strcmp(e[j].group, e[from].group) &&
				 !strcmp(e[j].key->suite, e[from].key->suite) &&
				 !strcmp(e[j].key->metric, e[from].key->metric);
		mm_table(q, e + from, i - from, !q->metric_glob || ntables > 1, shared, out);
		from = i;
	}
out:
	for (size_t i = 0; i < n; i++) {
		free(e[i].group);
		free(e[i].operand);
	}
	free(e);
	return found_operand ? 0 : -1;
}

/* ---- CSV ---- */

static void csv_field(struct buf *b, const char *s, int last)
{
	if (strpbrk(s, ",\"\n\r")) {
		buf_putc(b, '"');
		for (; *s; s++) {
			if (*s == '"')
				buf_putc(b, '"');
			buf_putc(b, *s);
		}
		buf_putc(b, '"');
	} else {
		buf_puts(b, s);
	}
	buf_putc(b, last ? '\n' : ',');
}

/* A JSON object of strings as "k=v,k=v", the form the query API takes. */
static void csv_pairs(struct buf *b, const char *json)
{
	json_t *obj = json_loads(json, 0, NULL);
	char *sorted = json_dumps(obj, JSON_SORT_KEYS | JSON_COMPACT);
	json_t *again = json_loads(sorted, 0, NULL);
	struct buf t = BUF_INIT;
	const char *key;
	json_t *v;

	json_object_foreach(again, key, v)
		buf_printf(&t, "%s%s=%s", t.len ? "," : "", key, json_string_value(v));
	csv_field(b, buf_str(&t), 0);
	buf_release(&t);
	free(sorted);
	json_decref(again);
	json_decref(obj);
}

static void csv_num(struct buf *b, double v, int last)
{
	char tmp[40] = "";
	if (isfinite(v))
		snprintf(tmp, sizeof(tmp), "%.10g", v);
	csv_field(b, tmp, last);
}

void compare_render_csv(const struct compare_req *q, struct buf *out)
{
	buf_puts(out, "machine,suite,params,variant,metric,direction,base,target,base_n,base_mean,"
		      "base_stddev_pct,target_n,target_mean,target_stddev_pct,change_pct,change_abs,"
		      "p_value,ci95_lo_pct,ci95_hi_pct,lkp_changed,verdict\n");
	for (size_t i = 0; i < q->set.nkeys; i++) {
		for (int t = 1; t < q->nrefs; t++) {
			struct cmp_row r;
			const struct cmp_key *k = q->set.keys[i];
			if (cmp_row_compute(k, t, &r) || !compare_row_shown(q, &r))
				continue;
			csv_field(out, k->machine, 0);
			csv_field(out, k->suite, 0);
			csv_pairs(out, k->params);
			csv_pairs(out, k->variant);
			csv_field(out, k->metric, 0);
			csv_field(out, direction_name(k->direction), 0);
			csv_field(out, q->refs[0].text, 0);
			csv_field(out, q->refs[t].text, 0);
			csv_num(out, (double)r.base.n, 0);
			csv_num(out, r.base.mean, 0);
			csv_num(out, r.base.stddev_pct, 0);
			csv_num(out, (double)r.tgt.n, 0);
			csv_num(out, r.tgt.mean, 0);
			csv_num(out, r.tgt.stddev_pct, 0);
			csv_num(out, r.change_pct, 0);
			csv_num(out, r.change_abs, 0);
			csv_num(out, r.welch_ok ? r.welch.p : NAN, 0);
			csv_num(out, r.welch_ok ? r.welch.ci_lo_pct : NAN, 0);
			csv_num(out, r.welch_ok ? r.welch.ci_hi_pct : NAN, 0);
			csv_field(out, r.lkp_changed ? "1" : "0", 0);
			csv_field(out, verdict_name(r.verdict), 1);
		}
	}
}
