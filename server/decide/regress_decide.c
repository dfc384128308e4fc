/*
 * regress_decide.c - a commit decided against its base from its key
 * group's loaded history, and the group's change points. The numbers are
 * the worker's as they were when it read each commit pair and history by
 * statement: the sides' keys made run by run in id order (the base first),
 * the history's commits the REGRESS_HISTORY_COMMITS with the newest runs,
 * in id order, a trend's points in commit order (regress_load.c ranks them
 * as trend.c does).
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server/stats/changepoint.h"
#include "lib/command.h"
#include "server/counters.h"
#include "lib/jsonw.h"
#include "lib/metric_role.h"
#include "server/decide/regress_decide.h"
#include "server/stats/stats_lkp.h"
#include "lib/util.h"

static void put_decision(struct buf *b, const struct rd_pair *p, long metric_id,
			 const struct cmp_key *k, const struct verdict_out *o,
			 const struct cmp_row *row, const char *command_differs)
{
	enum metric_role role;
	int rank;

	buf_printf(b, "{\"machine_id\":%ld,\"test_id\":%ld,\"variant_id\":%ld,\"metric_id\":%ld,"
		      "\"commit_id\":%ld,\"base_commit_id\":%ld,\"base_kind\":\"%s\",",
		   p->g->machine, p->g->test, p->g->variant, metric_id, p->x, p->base, p->kind);
	buf_printf(b, "\"direction\":\"%s\",\"base_n\":%zu,\"base_runs\":%zu,\"base_mean\":",
		   direction_name(k->direction), cmp_cell_count(&k->cell[0]), k->cell[0].nruns);
	jsonw_number(b, row->base.mean);
	buf_puts(b, ",\"base_stddev_pct\":");
	jsonw_number(b, row->base.stddev_pct);
	buf_printf(b, ",\"target_n\":%zu,\"target_runs\":%zu,\"target_mean\":",
		   cmp_cell_count(&k->cell[1]), k->cell[1].nruns);
	jsonw_number(b, row->tgt.mean);
	buf_puts(b, ",\"target_stddev_pct\":");
	jsonw_number(b, row->tgt.stddev_pct);
	buf_puts(b, ",\"change_pct\":");
	jsonw_number(b, o->change_pct);
	buf_puts(b, ",\"change_abs\":");
	jsonw_number(b, o->change_abs);
	buf_printf(b, ",\"absolute\":%s,\"p_value\":", o->absolute ? "true" : "false");
	jsonw_number(b, row->welch_ok ? row->welch.p : NAN);
	buf_puts(b, ",\"ci_lo_pct\":");
	jsonw_number(b, row->welch_ok ? row->welch.ci_lo_pct : NAN);
	buf_puts(b, ",\"ci_hi_pct\":");
	jsonw_number(b, row->welch_ok ? row->welch.ci_hi_pct : NAN);
	role = metric_role_rank(k->metric, k->suite, &rank);
	buf_printf(b,
		   ",\"test_used\":\"%s\",\"lkp_changed\":%s,\"verdict\":\"%s\",\"kpi\":%s,"
		   "\"role\":\"%s\",\"kpi_rank\":",
		   o->test, o->lkp_changed ? "true" : "false", verdict_name(o->verdict),
		   role == ROLE_KPI ? "true" : "false", metric_role_name(role));
	if (role == ROLE_KPI)
		buf_printf(b, "%d", rank);
	else
		buf_puts(b, "null");
	buf_puts(b, ",\"command_differs\":");
	if (command_differs)
		jsonw_str(b, command_differs);
	else
		buf_puts(b, "null");
	buf_putc(b, '}');
}

/* A key of the set and the group's metric it was made from. */
struct key_metric {
	const struct cmp_key *key;
	const struct rl_metric *m;
};

static int km_cmp(const void *a, const void *b)
{
	const struct cmp_key *x = ((const struct key_metric *)a)->key;
	const struct cmp_key *y = ((const struct key_metric *)b)->key;
	return x < y ? -1 : x > y;
}

static int last_run_desc(const void *a, const void *b, void *arg)
{
	const struct rl_commit *c = arg;
	long x = c[*(const size_t *)a].last_run, y = c[*(const size_t *)b].last_run;
	return x > y ? -1 : x < y;
}

static int size_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

/*
 * The history a decision tests against: the group's REGRESS_HISTORY_COMMITS
 * commits with the newest runs, the pair's two aside, in commit id order;
 * slot[k] is commit k's place in it, or -1.
 */
static size_t history_commits(const struct rl_group *g, size_t bi, size_t xi, long *slot)
{
	size_t *order = xcalloc(g->ncommits + 1, sizeof(*order)), n = 0, kept = 0;

	for (size_t k = 0; k < g->ncommits; k++) {
		slot[k] = -1;
		if (k != bi && k != xi)
			order[n++] = k;
	}
	qsort_r(order, n, sizeof(*order), last_run_desc, g->commits);
	kept = n < REGRESS_HISTORY_COMMITS ? n : REGRESS_HISTORY_COMMITS;
	qsort(order, kept, sizeof(*order), size_cmp); /* commits by id: they are by id */
	for (size_t i = 0; i < kept; i++)
		slot[order[i]] = (long)i;
	free(order);
	return kept;
}

/* The noise of metric m over the history commits (slot), as
 * verdict_noise_from_history_ex pools it (archived runs by their
 * summaries); 1 when known. */
static int metric_noise(const struct rl_group *g, const struct rl_metric *m, const long *slot,
			size_t nhist, struct noise_hist *out)
{
	size_t *count = xcalloc(nhist + 1, sizeof(*count)), *at = xcalloc(nhist + 1, sizeof(*at));
	const double **samples = xcalloc(nhist + 1, sizeof(*samples));
	size_t *n = xcalloc(nhist + 1, sizeof(*n)), total = 0, ncommits = 0;
	struct stats_moments *arch = xcalloc(nhist + 1, sizeof(*arch));
	struct stats_moments *carch = xcalloc(nhist + 1, sizeof(*carch));
	double *vals;
	int known;

	for (size_t s = 0; s < m->nsegs; s++) {
		long k = slot[g->runs[m->segs[s].run].commit_idx];
		if (k < 0)
			continue;
		if (m->segs[s].arch)
			stats_moments_merge(&arch[k], m->segs[s].arch);
		else
			count[k] += m->segs[s].n;
	}
	for (size_t k = 0; k < nhist; k++) {
		at[k] = total;
		total += count[k];
	}
	vals = xcalloc(total + 1, sizeof(*vals));
	for (size_t s = 0; s < m->nsegs; s++) {
		const struct rl_seg *sg = &m->segs[s];
		long k = slot[g->runs[sg->run].commit_idx];
		if (k < 0 || sg->arch)
			continue;
		memcpy(vals + at[k], g->vals + sg->off, sg->n * sizeof(*vals));
		at[k] += sg->n;
	}
	for (size_t k = 0, off = 0; k < nhist; off += count[k], k++) {
		if (!count[k] && !arch[k].n) /* no samples of this metric: not in its history */
			continue;
		samples[ncommits] = vals + off;
		carch[ncommits] = arch[k];
		n[ncommits++] = count[k];
	}
	known = verdict_noise_from_history_ex(samples, n, carch, ncommits, out) == 0;
	free(arch);
	free(carch);
	free(vals);
	free(samples);
	free(n);
	free(at);
	free(count);
	return known;
}

/* The key of metric m from one run (its own direction when it says one). */
static struct cmp_key *key_of(struct cmp_set *set, const struct cmp_prefix *prefix,
			      const struct rl_metric *m, const struct rl_run *run)
{
	const char *said = json_string_value(json_object_get(run->dirs, m->name));
	return cmp_set_key_in(set, prefix, m->name,
			      said ? direction_parse(said, m->by_name) : m->direction);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The distinct work arguments of g's runs at commit index ci, sorted. */
static size_t side_work(const struct rl_group *g, size_t ci, const char **out)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < g->nruns; i++)
		if (g->runs[i].commit_idx == ci && g->runs[i].work)
			out[n++] = g->runs[i].work;
	qsort(out, n, sizeof(*out), str_cmp);
	for (size_t i = 0; i < n; i++)
		if (!k || strcmp(out[k - 1], out[i]))
			out[k++] = out[i];
	return k;
}

/*
 * What differs between the work arguments of the base's and the target's
 * commands (command.h), malloc'd, or NULL when they ran the same work (or
 * a side posted no command).
 */
static char *work_differs(const struct rl_group *g, size_t bi, size_t xi)
{
	const char **b = xcalloc(g->nruns + 1, sizeof(*b)), **t = xcalloc(g->nruns + 1, sizeof(*t));
	size_t nb = side_work(g, bi, b), nt = side_work(g, xi, t);
	struct buf why = BUF_INIT;
	int same = nb == nt;

	for (size_t i = 0; same && i < nb; i++)
		same = !strcmp(b[i], t[i]);
	if (nb && nt && !same) {
		if (nb == 1 && nt == 1)
			command_work_diff(b[0], t[0], &why);
		else
			buf_printf(&why, "%zu kinds of command on the base, %zu on the target", nb, nt);
	}
	free(b);
	free(t);
	return why.len ? buf_detach(&why, NULL) : NULL;
}

/*
 * Decide p->x against p->base for every metric of the group: both sides'
 * runs as a compare reads them (base first, runs in id order), the history
 * noise, kperf's verdict with Benjamini-Hochberg across the metrics, one
 * row each into rows. A base or target without runs: no decision.
 */
int rd_decide(struct rd_pair *p, const struct verdict_config *cfg, struct buf *rows)
{
	struct rl_group *g = p->g;
	size_t xi = rl_commit_index(g, p->x), bi = rl_commit_index(g, p->base), nkm = 0, nhist;
	struct key_metric *km;
	struct cmp_set set;
	const struct cmp_prefix *prefix;
	struct noise_hist *hist;
	struct verdict_out *outs;
	int *have, *keep;
	double *pv;
	long *slot;
	char *differs;

	if (xi == (size_t)-1 || bi == (size_t)-1)
		return 0; /* the base has no runs of this group: no per-commit decision */
	differs = work_differs(g, bi, xi);
	cmp_set_init(&set, 2);
	prefix = cmp_set_prefix(&set, g->mname, g->suite, g->params, g->knobs);
	km = xcalloc(g->nmetrics + 1, sizeof(*km));
	for (size_t i = 0; i < g->nmetrics; i++) {
		const struct rl_metric *m = &g->metrics[i];
		struct cmp_key *k = NULL;
		for (int side = 0; side < 2; side++) {
			size_t want = side ? xi : bi;
			for (size_t s = 0; s < m->nsegs; s++) {
				const struct rl_run *run = &g->runs[m->segs[s].run];
				if (run->commit_idx != want)
					continue;
				k = key_of(&set, prefix, m, run);
				if (m->segs[s].arch) /* an archived run: its summary */
					cmp_cell_add_summary(&k->cell[side], m->segs[s].arch);
				else
					cmp_cell_add_run(&k->cell[side], g->vals + m->segs[s].off,
							 m->segs[s].n);
			}
		}
		if (k)
			km[nkm++] = (struct key_metric){k, m};
	}
	qsort(km, nkm, sizeof(*km), km_cmp);
	cmp_set_sort(&set);

	slot = xcalloc(g->ncommits + 1, sizeof(*slot));
	nhist = history_commits(g, bi, xi, slot);
	hist = xcalloc(set.nkeys + 1, sizeof(*hist));
	have = xcalloc(set.nkeys + 1, sizeof(*have));
	outs = xcalloc(set.nkeys + 1, sizeof(*outs));
	pv = xcalloc(set.nkeys + 1, sizeof(*pv));
	keep = xcalloc(set.nkeys + 1, sizeof(*keep));
	p->tm_ids = xcalloc(set.nkeys + 1, sizeof(*p->tm_ids));
	p->tm_means = xcalloc(set.nkeys + 1, sizeof(*p->tm_means));
	for (size_t i = 0; i < set.nkeys; i++) {
		const struct cmp_key *k = set.keys[i];
		struct key_metric probe = {k, NULL};
		const struct key_metric *f = bsearch(&probe, km, nkm, sizeof(*km), km_cmp);
		struct verdict_in in = {k->metric, k->suite, k->direction,
					k->cell[0].samples, k->cell[0].n, k->cell[1].samples,
					k->cell[1].n, k->cell[0].run_means, k->cell[0].nruns,
					k->cell[1].run_means, k->cell[1].nruns, NULL, cfg, NULL, NULL};

		have[i] = f && metric_noise(g, f->m, slot, nhist, &hist[i]);
		in.hist = have[i] ? &hist[i] : NULL;
		/* archived runs of a side: Welch on the moments, no history test */
		in.base_arch = k->cell[0].arch;
		in.target_arch = k->cell[1].arch;
		pv[i] = NAN;
		keep[i] = 1;
		if (f && cmp_cell_count(&k->cell[1])) {
			struct stats_moments tm;
			p->tm_ids[p->ntm] = f->m->id;
			if (k->cell[1].arch) {
				cmp_cell_moments(&k->cell[1], &tm);
				p->tm_means[p->ntm++] = tm.mean;
			} else {
				p->tm_means[p->ntm++] = stats_mean(k->cell[1].samples, k->cell[1].n);
			}
		}
		if (!cmp_cell_count(&k->cell[0]) || !cmp_cell_count(&k->cell[1]))
			continue;
		if (verdict_decide(&in, &outs[i]) == 0 && outs[i].passes_floor)
			pv[i] = outs[i].p;
	}
	/* Benjamini-Hochberg across the metrics of this commit pair */
	verdict_fdr(pv, set.nkeys, REGRESS_FDR_Q, keep);
	for (size_t i = 0; i < set.nkeys; i++) {
		const struct cmp_key *k = set.keys[i];
		struct key_metric probe = {k, NULL};
		const struct key_metric *f = bsearch(&probe, km, nkm, sizeof(*km), km_cmp);
		struct cmp_row row;
		if (!f || cmp_row_compute(k, 1, &row))
			continue;
		if (!keep[i])
			outs[i].verdict = VERDICT_NOISE;
		if (rows->len > 1)
			buf_putc(rows, ',');
		put_decision(rows, p, f->m->id, k, &outs[i], &row, differs);
	}
	counters.decisions_made += set.nkeys;
	p->decided = 1;
	cmp_set_release(&set);
	free(km);
	free(slot);
	free(hist);
	free(have);
	free(outs);
	free(pv);
	free(keep);
	free(differs);
	return 1;
}

/* Change points of every metric of the group, as trend.c's history gives
 * them (commits in commit order, each run's values pooled, archived runs by
 * their summaries), into cps. */
void rd_change_points(const struct rl_group *g, struct buf *cps)
{
	size_t nc = g->ncommits;
	size_t *count, *at, *rank_of;

	if (nc < REGRESS_CP_COMMITS) /* too short a history: no change points */
		return;
	count = xcalloc(nc + 1, sizeof(*count));
	at = xcalloc(nc + 1, sizeof(*at));
	rank_of = xcalloc(nc + 1, sizeof(*rank_of)); /* rank -> commit index */
	for (size_t k = 0; k < nc; k++)
		rank_of[g->commits[k].rank] = k;
	for (size_t i = 0; i < g->nmetrics; i++) {
		const struct rl_metric *m = &g->metrics[i];
		const double **samples = xcalloc(nc + 1, sizeof(*samples));
		size_t *n = xcalloc(nc + 1, sizeof(*n)), *idx = xcalloc(nc + 1, sizeof(*idx));
		struct stats_moments *arch = xcalloc(nc + 1, sizeof(*arch)); /* by rank */
		struct stats_moments *parch = xcalloc(nc + 1, sizeof(*parch)); /* by point */
		size_t npoints = 0, total = 0;
		struct cp_point *pts = NULL;
		size_t npts = 0;
		double *vals;

		memset(count, 0, nc * sizeof(*count));
		for (size_t s = 0; s < m->nsegs; s++) {
			size_t r = g->commits[g->runs[m->segs[s].run].commit_idx].rank;
			if (m->segs[s].arch)
				stats_moments_merge(&arch[r], m->segs[s].arch);
			else
				count[r] += m->segs[s].n;
		}
		for (size_t r = 0; r < nc; r++) {
			at[r] = total;
			total += count[r];
		}
		vals = xcalloc(total + 1, sizeof(*vals));
		for (size_t s = 0; s < m->nsegs; s++) {
			const struct rl_seg *sg = &m->segs[s];
			size_t r = g->commits[g->runs[sg->run].commit_idx].rank;
			if (sg->arch)
				continue;
			memcpy(vals + at[r], g->vals + sg->off, sg->n * sizeof(*vals));
			at[r] += sg->n;
		}
		for (size_t r = 0, off = 0; r < nc; off += count[r], r++) {
			if (!count[r] && !arch[r].n)
				continue;
			samples[npoints] = vals + off;
			n[npoints] = count[r];
			parch[npoints] = arch[r];
			idx[npoints++] = rank_of[r];
		}
		if (npoints >= REGRESS_CP_COMMITS &&
		    changepoint_detect_ex(samples, n, parch, npoints, NULL, &pts, &npts) == 0) {
			for (size_t j = 0; j < npts; j++) {
				size_t k = pts[j].index, prev = pts[j].prev;
				if (k == 0 || k >= npoints || prev >= k)
					continue;
				buf_printf(cps,
					   "%s{\"machine_id\":%ld,\"test_id\":%ld,\"variant_id\":%ld,"
					   "\"metric_id\":%ld,\"commit_id\":%ld,\"prev_commit_id\":%ld,"
					   "\"shift_pct\":",
					   cps->len > 1 ? "," : "", g->machine, g->test, g->variant, m->id,
					   g->commits[idx[k]].id, g->commits[idx[prev]].id);
				jsonw_number(cps, pts[j].shift_pct);
				buf_puts(cps, ",\"ci_lo_pct\":");
				jsonw_number(cps, pts[j].ci_lo_pct);
				buf_puts(cps, ",\"ci_hi_pct\":");
				jsonw_number(cps, pts[j].ci_hi_pct);
				buf_puts(cps, ",\"p_value\":");
				jsonw_number(cps, pts[j].p);
				buf_putc(cps, '}');
			}
		}
		free(pts);
		free(arch);
		free(parch);
		free(vals);
		free(samples);
		free(n);
		free(idx);
	}
	free(count);
	free(at);
	free(rank_of);
}

void rd_pair_release(struct rd_pair *p)
{
	free(p->tm_ids);
	free(p->tm_means);
	p->tm_ids = NULL;
	p->tm_means = NULL;
	p->ntm = 0;
}
