/*
 * trend_view.c - a trend key as GET /api/v1/trend shows it: its key groups
 * (SQL_KEYS), and per variant the history (trend_load) read in one round
 * trip with the stored change points and decisions, whose commits are named
 * from the commit cache; a point's mean, stddev, min and max.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server/db/db.h"
#include "server/stats/stats.h"
#include "server/reads/trend.h"
#include "server/reads/trend_view.h"
#include "lib/util.h"

static const char SQL_KEYS[] =
	"SELECT m.id, t.id, t.params::text, v.id, v.knobs::text,"
	" (SELECT id FROM metric WHERE name = $3)"
	" FROM key_group g JOIN machine m ON m.id = g.machine_id JOIN test t ON t.id = g.test_id"
	" JOIN variant v ON v.id = g.variant_id"
	" WHERE m.name = $1 AND t.suite = $2 AND ($4::jsonb IS NULL OR t.params = $4::jsonb)"
	"  AND ($5::jsonb IS NULL OR v.knobs = $5::jsonb)"
	" ORDER BY 3, 5";

/* Change points and decisions name their commits by id: the names come
 * from the commit cache (trend_commit_names). */
static const char SQL_CHANGE_POINTS[] =
	"SELECT cp.id, cp.commit_id, cp.prev_commit_id, cp.shift_pct, cp.ci_lo_pct,"
	" cp.ci_hi_pct, cp.p_value FROM change_point cp"
	" WHERE cp.machine_id = $1 AND cp.test_id = $2 AND cp.variant_id = $3"
	"  AND cp.metric_id = $4 ORDER BY cp.id";

static const char SQL_DECISIONS[] =
	"SELECT d.id, d.commit_id, d.verdict, d.change_pct, d.change_abs, d.state"
	" FROM decision d"
	" WHERE d.machine_id = $1 AND d.test_id = $2 AND d.variant_id = $3 AND d.metric_id = $4"
	"  AND d.verdict <> 'noise' ORDER BY d.id";

PGresult *trend_keys(PGconn *c, const char *machine, const char *suite, const char *metric,
		     const char *params_json, const char *knobs_json)
{
	const char *params[5] = {machine, suite, metric, params_json, knobs_json};

	return db_exec(c, SQL_KEYS, 5, params);
}

/*
 * The names of the commits of the change points (commit and previous one,
 * 2 * *ncp) and then of the decisions (g->extra_res 0 and 1), in one array
 * (free it); NULL with *failed.
 */
static const char **extra_commit_names(PGconn *c, struct trend_group *g, size_t *ncp,
				       PGresult **failed)
{
	PGresult *cp = g->extra_res[0], *d = g->extra_res[1];
	size_t n = 2 * (size_t)PQntuples(cp) + (size_t)PQntuples(d), k = 0;
	long *ids = xcalloc(n + 1, sizeof(*ids));
	const char **names = xcalloc(n + 1, sizeof(*names));

	for (int i = 0; i < PQntuples(cp); i++) {
		ids[k++] = strtol(PQgetvalue(cp, i, 1), NULL, 10);
		ids[k++] = strtol(PQgetvalue(cp, i, 2), NULL, 10);
	}
	*ncp = k;
	for (int i = 0; i < PQntuples(d); i++)
		ids[k++] = strtol(PQgetvalue(d, i, 1), NULL, 10);
	if (trend_commit_names(c, g, ids, n, names, failed)) {
		free(names);
		names = NULL;
	}
	free(ids);
	return names;
}

int trend_series_load(PGconn *c, const PGresult *keys, int row, struct trend_series *s,
		      PGresult **failed)
{
	const char *params[4] = {PQgetvalue(keys, row, TREND_KEY_MACHINE_ID),
				 PQgetvalue(keys, row, TREND_KEY_TEST_ID),
				 PQgetvalue(keys, row, TREND_KEY_VARIANT_ID),
				 PQgetvalue(keys, row, TREND_KEY_METRIC_ID)};
	/* read in the same round trip as the history */
	const struct db_stmt extra[2] = {{SQL_CHANGE_POINTS, 4, params, 0, NULL, NULL},
					 {SQL_DECISIONS, 4, params, 0, NULL, NULL}};
	PGresult *r;
	size_t ncp;

	memset(s, 0, sizeof(*s));
	if (trend_load(c, params[0], params[1], params[2], params[3], 0, extra, 2, &s->g,
		       failed) ||
	    !(s->names = extra_commit_names(c, &s->g, &ncp, failed))) {
		trend_release(&s->g);
		memset(s, 0, sizeof(*s));
		return -1;
	}
	r = s->g.extra_res[0];
	s->ncps = (size_t)PQntuples(r);
	s->cps = xcalloc(s->ncps + 1, sizeof(*s->cps));
	for (int i = 0; i < PQntuples(r); i++) {
		struct trend_change_point *p = &s->cps[i];
		p->id = PQgetvalue(r, i, 0);
		p->commit = s->names[2 * i];
		p->prev_commit = s->names[2 * i + 1];
		p->shift_pct = strtod(PQgetvalue(r, i, 3), NULL);
		p->ci_lo_pct = strtod(PQgetvalue(r, i, 4), NULL);
		p->ci_hi_pct = strtod(PQgetvalue(r, i, 5), NULL);
		p->p_value = strtod(PQgetvalue(r, i, 6), NULL);
	}
	r = s->g.extra_res[1];
	s->ndecisions = (size_t)PQntuples(r);
	s->decisions = xcalloc(s->ndecisions + 1, sizeof(*s->decisions));
	for (int i = 0; i < PQntuples(r); i++) {
		struct trend_decision *d = &s->decisions[i];
		d->id = PQgetvalue(r, i, 0);
		d->commit = s->names[ncp + (size_t)i];
		d->verdict = PQgetvalue(r, i, 2);
		d->change_pct = PQgetisnull(r, i, 3) ? NAN : strtod(PQgetvalue(r, i, 3), NULL);
		d->change_abs = strtod(PQgetvalue(r, i, 4), NULL);
		d->state = PQgetvalue(r, i, 5);
	}
	return 0;
}

void trend_series_release(struct trend_series *s)
{
	free(s->cps);
	free(s->decisions);
	free(s->names);
	trend_release(&s->g);
	memset(s, 0, sizeof(*s));
}

void trend_point_figures(const struct trend_point *p, struct trend_figures *f)
{
	if (p->narch) { /* archived runs: their summaries joined to the samples */
		struct stats_moments all;
		stats_moments_of(p->samples, p->n, &all);
		stats_moments_merge(&all, &p->arch);
		f->n = all.n;
		f->mean = all.mean;
		f->stddev = all.n > 1 ? stats_moments_stddev(&all) : 0;
		f->min = all.min;
		f->max = all.max;
		return;
	}
	f->n = p->n;
	f->mean = stats_mean(p->samples, p->n);
	f->stddev = p->n > 1 ? stats_stddev(p->samples, p->n) : 0;
	f->min = stats_min(p->samples, p->n);
	f->max = stats_max(p->samples, p->n);
}
