/*
 * regress.c - the decision worker. A queue entry carries a version that each
 * arriving run bumps; the worker deletes the entry only if the version it
 * decided is still current, so no run is missed and nothing blocks ingest.
 * All writes of one key group happen in one transaction.
 */
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alert.h"
#include "buf.h"
#include "changepoint.h"
#include "compare_load.h"
#include "counters.h"
#include "db.h"
#include "jsonw.h"
#include "migrate.h"
#include "regress.h"
#include "stats_lkp.h"
#include "trend.h"
#include "util.h"
#include "verdict.h"

#define REGRESS_POLL_US 200000
#define REGRESS_HISTORY_COMMITS 30
/* A regression counts as recovered when a later commit undoes 75% of it. */
#define REGRESS_RECOVERED_SHARE 0.75
#define REGRESS_FDR_Q 0.05

static struct verdict_config vcfg;
static double alert_settle_s = 120;
static pthread_t worker_thread;
static atomic_int worker_stop;
static int worker_running;

/* Commits a history needs before change points are looked for in it. */
#define REGRESS_CP_COMMITS 4

/*
 * A queued group is decided once no run has arrived for it for a quarter
 * second (touched_at), so the runs of a batch, or of collectors posting
 * together, are decided once; under a steady stream of runs it is decided
 * every two seconds (queued_at, reset when a pass ends with runs still
 * arriving). Deciding once per run kept a core busy re-reading histories,
 * and four times a second still took as much of PostgreSQL as the ingest.
 */
#define REGRESS_QUIET "interval '250 milliseconds'"
#define REGRESS_MAX_WAIT "interval '2 seconds'"

/*
 * One group: the oldest claimable, found by a scalar subquery that runs once.
 * As a join with the table ("FROM (SELECT ... LIMIT 1 FOR UPDATE SKIP LOCKED)
 * x") it left 16-22 groups claimed and undecided after the ingest of `make
 * bench`, each waiting the 5 minutes for its claim to expire.
 */
static const char SQL_CLAIM[] =
	"UPDATE decision_queue q SET claimed_at = now()"
	" WHERE (q.commit_id, q.machine_id, q.test_id, q.variant_id)"
	"  = (SELECT commit_id, machine_id, test_id, variant_id FROM decision_queue"
	"  WHERE (claimed_at IS NULL AND (touched_at < now() - " REGRESS_QUIET
	"    OR queued_at < now() - " REGRESS_MAX_WAIT "))"
	"   OR claimed_at < now() - interval '5 minutes'"
	"  ORDER BY queued_at LIMIT 1 FOR UPDATE SKIP LOCKED)"
	" RETURNING q.commit_id, q.machine_id, q.test_id, q.variant_id, q.version";

static const char SQL_DONE[] =
	"DELETE FROM decision_queue WHERE commit_id = $1 AND machine_id = $2 AND test_id = $3"
	" AND variant_id = $4 AND version = $5";

/* Runs arrived while deciding: decide again once they settle. */
static const char SQL_RELEASE[] =
	"UPDATE decision_queue SET claimed_at = NULL, queued_at = now()"
	" WHERE commit_id = $1 AND machine_id = $2 AND test_id = $3 AND variant_id = $4";

static const char SQL_GROUP[] =
	"SELECT m.name, t.suite, t.params::text, v.knobs::text FROM machine m, test t, variant v"
	" WHERE m.id = $1 AND t.id = $2 AND v.id = $3";

/* The base of a commit: its parent, or for a patch of a series the first
 * parent outside the series (the series base). */
static const char SQL_BASE[] =
	"WITH RECURSIVE me AS (SELECT id, parent_sha, series FROM commits WHERE id = $1),"
	" chain(id, parent_sha, depth) AS (SELECT id, parent_sha, 0 FROM me"
	"  UNION ALL SELECT p.id, p.parent_sha, chain.depth + 1"
	"  FROM chain JOIN commits p ON p.sha = chain.parent_sha, me"
	"  WHERE me.series IS NOT NULL AND p.series = me.series AND chain.depth < 1000)"
	" SELECT b.id, CASE WHEN (SELECT series FROM me) IS NULL THEN 'parent'"
	"  ELSE 'series_base' END"
	" FROM (SELECT parent_sha FROM chain ORDER BY depth DESC LIMIT 1) last"
	" JOIN commits b ON b.sha = last.parent_sha";

/* Commits whose base is $1 and that ran this key group. */
static const char SQL_CHILDREN[] =
	"SELECT x.id FROM commits x, commits me WHERE me.id = $1 AND me.sha IS NOT NULL AND x.id <> me.id"
	" AND ((x.parent_sha = me.sha AND (x.series IS NULL OR x.series IS DISTINCT FROM me.series))"
	"  OR x.series IN (SELECT f.series FROM commits f WHERE f.parent_sha = me.sha"
	"   AND f.series IS NOT NULL AND f.series IS DISTINCT FROM me.series))"
	" AND EXISTS (SELECT 1 FROM run r WHERE r.commit_id = x.id AND r.machine_id = $2"
	"  AND r.test_id = $3 AND r.variant_id = $4 AND r.valid)";

/* Samples of the group's recent other commits, for each metric's noise. */
static const char SQL_HISTORY[] =
	"WITH hc AS (SELECT r.commit_id FROM run r WHERE r.machine_id = $1 AND r.test_id = $2"
	"  AND r.variant_id = $3 AND r.valid AND r.commit_id <> ALL($4::bigint[])"
	"  GROUP BY r.commit_id ORDER BY max(r.id) DESC LIMIT $5)"
	" SELECT mt.name, r.commit_id, s.value FROM run r JOIN sample s ON s.run_id = r.id AND s.at = r.received_at"
	" JOIN metric mt ON mt.id = s.metric_id"
	" WHERE r.commit_id IN (SELECT commit_id FROM hc) AND r.machine_id = $1"
	"  AND r.test_id = $2 AND r.variant_id = $3 AND r.valid"
	" ORDER BY mt.name, r.commit_id";

static const char SQL_UPSERT[] =
	"INSERT INTO decision AS d (machine_id, test_id, variant_id, metric_id, commit_id,"
	" base_commit_id, base_kind, direction, base_n, base_runs, base_mean, base_stddev_pct,"
	" target_n, target_runs, target_mean, target_stddev_pct, change_pct, change_abs, absolute,"
	" p_value, ci_lo_pct, ci_hi_pct, test_used, lkp_changed, verdict, kpi)"
	" SELECT $1, $2, $3, mt.id, $4, $5, $6, x.direction, x.base_n, x.base_runs, x.base_mean,"
	" x.base_stddev_pct, x.target_n, x.target_runs, x.target_mean, x.target_stddev_pct,"
	" x.change_pct, x.change_abs, x.absolute, x.p_value, x.ci_lo_pct, x.ci_hi_pct,"
	" x.test_used, x.lkp_changed, x.verdict, x.kpi"
	" FROM jsonb_to_recordset($7::jsonb) AS x(metric text, direction text, base_n int,"
	"  base_runs int, base_mean float8, base_stddev_pct float8, target_n int, target_runs int,"
	"  target_mean float8, target_stddev_pct float8, change_pct float8, change_abs float8,"
	"  absolute bool, p_value float8, ci_lo_pct float8, ci_hi_pct float8, test_used text,"
	"  lkp_changed bool, verdict text, kpi bool)"
	" JOIN metric mt ON mt.name = x.metric"
	" ON CONFLICT (machine_id, test_id, variant_id, metric_id, commit_id) DO UPDATE SET"
	" base_commit_id = EXCLUDED.base_commit_id, base_kind = EXCLUDED.base_kind,"
	" direction = EXCLUDED.direction, base_n = EXCLUDED.base_n, base_runs = EXCLUDED.base_runs,"
	" base_mean = EXCLUDED.base_mean, base_stddev_pct = EXCLUDED.base_stddev_pct,"
	" target_n = EXCLUDED.target_n, target_runs = EXCLUDED.target_runs,"
	" target_mean = EXCLUDED.target_mean, target_stddev_pct = EXCLUDED.target_stddev_pct,"
	" change_pct = EXCLUDED.change_pct, change_abs = EXCLUDED.change_abs,"
	" absolute = EXCLUDED.absolute, p_value = EXCLUDED.p_value,"
	" ci_lo_pct = EXCLUDED.ci_lo_pct, ci_hi_pct = EXCLUDED.ci_hi_pct,"
	" test_used = EXCLUDED.test_used, lkp_changed = EXCLUDED.lkp_changed,"
	" verdict = EXCLUDED.verdict, kpi = EXCLUDED.kpi, decided_at = now()";

/* Open regressions of the group at commits older than $4. */
static const char SQL_OPEN[] =
	"SELECT d.id, mt.name, d.direction, d.base_mean, d.target_mean FROM decision d"
	" JOIN metric mt ON mt.id = d.metric_id JOIN commits rc ON rc.id = d.commit_id,"
	" commits cc WHERE d.machine_id = $1 AND d.test_id = $2 AND d.variant_id = $3"
	" AND cc.id = $4 AND d.commit_id <> $4 AND d.verdict = 'regression'"
	" AND d.recovered_by IS NULL"
	" AND coalesce(cc.committed_at, cc.created_at) > coalesce(rc.committed_at, rc.created_at)";

static const char SQL_RECOVERED[] =
	"WITH u AS (UPDATE decision SET recovered_by = $1, updated_at = now()"
	"  WHERE id = ANY($2::bigint[]) RETURNING commit_id)"
	" SELECT DISTINCT commit_id FROM u";

static const char SQL_CP_DELETE[] =
	"DELETE FROM change_point WHERE machine_id = $1 AND test_id = $2 AND variant_id = $3";

static const char SQL_CP_INSERT[] =
	"INSERT INTO change_point (machine_id, test_id, variant_id, metric_id, commit_id,"
	" prev_commit_id, shift_pct, ci_lo_pct, ci_hi_pct, p_value)"
	" SELECT $1, $2, $3, x.metric_id, x.commit_id, x.prev_commit_id, x.shift_pct,"
	" x.ci_lo_pct, x.ci_hi_pct, x.p_value FROM jsonb_to_recordset($4::jsonb) AS"
	" x(metric_id bigint, commit_id bigint, prev_commit_id bigint, shift_pct float8,"
	"  ci_lo_pct float8, ci_hi_pct float8, p_value float8)";

struct group {
	const char *commit, *machine, *test, *variant; /* ids as text */
	const char *mname, *suite, *params, *knobs;    /* the group's names */
};

static int run_sql(PGconn *c, const char *sql, int n, const char *const *params,
		   const char *what)
{
	PGresult *r = db_exec(c, sql, n, params);
	int rc = db_ok(r) ? 0 : -1;
	if (rc)
		db_log_error(what, c, r);
	PQclear(r);
	return rc;
}

/* Noise of each key's metric from the group's history; hist[i] for keys[i]. */
static int load_history(PGconn *c, const struct group *g, const char *exclude,
			const struct cmp_set *set, struct noise_hist *hist, int *have)
{
	char limit[16];
	const char *params[5] = {g->machine, g->test, g->variant, exclude, limit};
	PGresult *r;
	int n;

	snprintf(limit, sizeof(limit), "%d", REGRESS_HISTORY_COMMITS);
	r = db_exec(c, SQL_HISTORY, 5, params);
	if (!db_ok(r)) {
		db_log_error("reading history", c, r);
		PQclear(r);
		return -1;
	}
	n = PQntuples(r);
	for (int i = 0; i < n;) {
		const char *name = PQgetvalue(r, i, 0);
		const double **samples = NULL;
		size_t *counts = NULL, ncommits = 0;
		double *vals = xmalloc(sizeof(double) * (size_t)n);
		size_t nv = 0;
		int j = i;

		for (; j < n && !strcmp(PQgetvalue(r, j, 0), name); j++) {
			if (j == i || strcmp(PQgetvalue(r, j, 1), PQgetvalue(r, j - 1, 1))) {
				samples = xrealloc(samples, (ncommits + 1) * sizeof(*samples));
				counts = xrealloc(counts, (ncommits + 1) * sizeof(*counts));
				samples[ncommits] = vals + nv;
				counts[ncommits++] = 0;
			}
			vals[nv++] = strtod(PQgetvalue(r, j, 2), NULL);
			counts[ncommits - 1]++;
		}
		for (size_t k = 0; k < set->nkeys; k++) {
			if (!strcmp(set->keys[k]->metric, name)) {
				have[k] = verdict_noise_from_history(samples, counts, ncommits,
								     &hist[k]) == 0;
				break;
			}
		}
		free(samples);
		free(counts);
		free(vals);
		i = j;
	}
	PQclear(r);
	return 0;
}

/* Mark older regressions of the group that this commit's level undoes. */
static int mark_recoveries(PGconn *c, const struct group *g, const char *commit,
			   const struct cmp_set *set)
{
	const char *params[4] = {g->machine, g->test, g->variant, commit};
	struct buf ids = BUF_INIT;
	PGresult *r = db_exec(c, SQL_OPEN, 4, params);
	int rc = 0;

	if (!db_ok(r)) {
		db_log_error("reading open regressions", c, r);
		PQclear(r);
		return -1;
	}
	buf_putc(&ids, '{');
	for (int i = 0; i < PQntuples(r); i++) {
		const char *name = PQgetvalue(r, i, 1);
		double before = strtod(PQgetvalue(r, i, 3), NULL);
		double after = strtod(PQgetvalue(r, i, 4), NULL);
		double need = after + REGRESS_RECOVERED_SHARE * (before - after);
		for (size_t k = 0; k < set->nkeys; k++) {
			const struct cmp_cell *t = &set->keys[k]->cell[1];
			double now;
			if (strcmp(set->keys[k]->metric, name) || !t->n)
				continue;
			now = stats_mean(t->samples, t->n);
			if ((before > after && now >= need) || (before < after && now <= need))
				buf_printf(&ids, "%s%s", ids.len > 1 ? "," : "", PQgetvalue(r, i, 0));
			break;
		}
	}
	buf_putc(&ids, '}');
	PQclear(r);
	if (ids.len > 2) {
		/* subscribers told of those regressions get a follow-up */
		const char *p2[2] = {commit, buf_str(&ids)};
		PGresult *u = db_exec(c, SQL_RECOVERED, 2, p2);
		if (!db_ok(u)) {
			db_log_error("marking recoveries", c, u);
			rc = -1;
		}
		for (int i = 0; !rc && i < PQntuples(u); i++)
			rc = alert_enqueue(c, g->machine, g->test, g->variant, PQgetvalue(u, i, 0),
					   alert_settle_s);
		PQclear(u);
	}
	buf_release(&ids);
	return rc;
}

static void put_decision(struct buf *b, const struct cmp_key *k, const struct verdict_out *o,
			 const struct cmp_row *row)
{
	buf_puts(b, "{\"metric\":");
	jsonw_string(b, k->metric, strlen(k->metric));
	buf_printf(b, ",\"direction\":\"%s\",\"base_n\":%zu,\"base_runs\":%zu,\"base_mean\":",
		   direction_name(k->direction), k->cell[0].n, k->cell[0].nruns);
	jsonw_number(b, row->base.mean);
	buf_puts(b, ",\"base_stddev_pct\":");
	jsonw_number(b, row->base.stddev_pct);
	buf_printf(b, ",\"target_n\":%zu,\"target_runs\":%zu,\"target_mean\":", k->cell[1].n,
		   k->cell[1].nruns);
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
	buf_printf(b, ",\"test_used\":\"%s\",\"lkp_changed\":%s,\"verdict\":\"%s\",\"kpi\":%s}",
		   o->test, o->lkp_changed ? "true" : "false", verdict_name(o->verdict),
		   lkp_is_benchmark(k->metric, k->suite) ? "true" : "false");
}

/* Decide commit against its base for every metric of the group. */
static int decide_commit(PGconn *c, const struct group *g, const char *commit)
{
	const char *params[8];
	char base_id[24], ids[64], tgt_ids[32], base_ids[32];
	struct cmp_set set;
	struct noise_hist *hist = NULL;
	int *have = NULL, *keep = NULL;
	struct verdict_out *outs = NULL;
	double *p = NULL;
	struct buf rows = BUF_INIT;
	size_t nb = 0, nt = 0;
	PGresult *r, *failed = NULL;
	char kind[16];
	int rc = -1, first = 1;

	params[0] = commit;
	r = db_exec(c, SQL_BASE, 1, params);
	if (!db_ok(r)) {
		db_log_error("finding the base", c, r);
		PQclear(r);
		return -1;
	}
	if (PQntuples(r) == 0) {
		PQclear(r);
		return 0; /* no known parent: the history scan covers it */
	}
	snprintf(base_id, sizeof(base_id), "%s", PQgetvalue(r, 0, 0));
	snprintf(kind, sizeof(kind), "%s", PQgetvalue(r, 0, 1));
	PQclear(r);

	cmp_set_init(&set, 2);
	snprintf(base_ids, sizeof(base_ids), "{%s}", base_id);
	snprintf(tgt_ids, sizeof(tgt_ids), "{%s}", commit);
	{
		struct cmp_filter fb = {base_ids, "{}", "{}", g->suite, g->mname, NULL,
					g->knobs, g->params};
		struct cmp_filter ft = fb;
		ft.commit_ids = tgt_ids;
		if (cmp_load_side(c, &set, 0, &fb, &nb, NULL, &failed) ||
		    cmp_load_side(c, &set, 1, &ft, &nt, NULL, &failed)) {
			db_log_error("loading a decision's samples", c, failed);
			PQclear(failed);
			goto out;
		}
	}
	if (!nb || !nt) {
		rc = 0; /* the base has no runs of this group: no per-commit decision */
		goto out;
	}
	cmp_set_sort(&set);
	hist = xcalloc(set.nkeys + 1, sizeof(*hist));
	have = xcalloc(set.nkeys + 1, sizeof(*have));
	outs = xcalloc(set.nkeys + 1, sizeof(*outs));
	p = xcalloc(set.nkeys + 1, sizeof(*p));
	keep = xcalloc(set.nkeys + 1, sizeof(*keep));
	snprintf(ids, sizeof(ids), "{%s,%s}", base_id, commit);
	if (load_history(c, g, ids, &set, hist, have))
		goto out;
	for (size_t i = 0; i < set.nkeys; i++) {
		const struct cmp_key *k = set.keys[i];
		struct verdict_in in = {k->metric, k->suite, k->direction,
					k->cell[0].samples, k->cell[0].n, k->cell[1].samples,
					k->cell[1].n, k->cell[0].run_means, k->cell[0].nruns,
					k->cell[1].run_means, k->cell[1].nruns,
					have[i] ? &hist[i] : NULL, &vcfg};
		p[i] = NAN;
		keep[i] = 1;
		if (!k->cell[0].n || !k->cell[1].n)
			continue;
		if (verdict_decide(&in, &outs[i]) == 0 && outs[i].passes_floor)
			p[i] = outs[i].p;
	}
	/* Benjamini-Hochberg across the metrics of this commit pair */
	verdict_fdr(p, set.nkeys, REGRESS_FDR_Q, keep);
	buf_putc(&rows, '[');
	for (size_t i = 0; i < set.nkeys; i++) {
		const struct cmp_key *k = set.keys[i];
		struct cmp_row row;
		if (cmp_row_compute(k, 1, &row))
			continue;
		if (!keep[i])
			outs[i].verdict = VERDICT_NOISE;
		if (!first)
			buf_putc(&rows, ',');
		first = 0;
		put_decision(&rows, k, &outs[i], &row);
	}
	buf_putc(&rows, ']');
	params[0] = g->machine;
	params[1] = g->test;
	params[2] = g->variant;
	params[3] = commit;
	params[4] = base_id;
	params[5] = kind;
	params[6] = buf_str(&rows);
	counters.decisions_made += set.nkeys;
	if (run_sql(c, SQL_UPSERT, 7, params, "storing decisions") ||
	    mark_recoveries(c, g, commit, &set) ||
	    alert_enqueue(c, g->machine, g->test, g->variant, commit, alert_settle_s))
		goto out;
	rc = 0;
out:
	cmp_set_release(&set);
	free(hist);
	free(have);
	free(outs);
	free(p);
	free(keep);
	buf_release(&rows);
	return rc;
}

/* Change points of every metric of the group, replacing the stored ones. */
static int scan_history(PGconn *c, const struct group *g)
{
	const char *params[4] = {g->machine, g->test, g->variant, NULL};
	struct trend_group tg;
	struct buf cps = BUF_INIT;
	PGresult *failed = NULL;
	int rc = -1, first = 1;

	/* a change point needs REGRESS_CP_COMMITS commits: a shorter history is not read */
	if (trend_load(c, g->machine, g->test, g->variant, NULL, REGRESS_CP_COMMITS, NULL, 0, &tg,
		       &failed)) {
		db_log_error("loading history", c, failed);
		PQclear(failed);
		return -1;
	}
	buf_putc(&cps, '[');
	for (size_t t = 0; t < tg.ntrends; t++) {
		const struct trend *tr = &tg.trends[t];
		const double **samples = xcalloc(tr->npoints + 1, sizeof(*samples));
		size_t *n = xcalloc(tr->npoints + 1, sizeof(*n));
		struct cp_point *pts = NULL;
		size_t npts = 0;

		for (size_t i = 0; i < tr->npoints; i++) {
			samples[i] = tr->points[i].samples;
			n[i] = tr->points[i].n;
		}
		if (tr->npoints >= REGRESS_CP_COMMITS &&
		    changepoint_detect(samples, n, tr->npoints, NULL, &pts, &npts) == 0) {
			for (size_t i = 0; i < npts; i++) {
				size_t at = pts[i].index, prev = pts[i].prev;
				if (at == 0 || at >= tr->npoints || prev >= at)
					continue;
				buf_printf(&cps, "%s{\"metric_id\":%ld,\"commit_id\":%ld,"
					   "\"prev_commit_id\":%ld,\"shift_pct\":",
					   first ? "" : ",", tr->metric_id,
					   tr->points[at].commit->id, tr->points[prev].commit->id);
				jsonw_number(&cps, pts[i].shift_pct);
				buf_puts(&cps, ",\"ci_lo_pct\":");
				jsonw_number(&cps, pts[i].ci_lo_pct);
				buf_puts(&cps, ",\"ci_hi_pct\":");
				jsonw_number(&cps, pts[i].ci_hi_pct);
				buf_puts(&cps, ",\"p_value\":");
				jsonw_number(&cps, pts[i].p);
				buf_putc(&cps, '}');
				first = 0;
			}
		}
		free(pts);
		free(samples);
		free(n);
	}
	buf_putc(&cps, ']');
	params[3] = buf_str(&cps);
	if (!run_sql(c, SQL_CP_DELETE, 3, params, "clearing change points") &&
	    !run_sql(c, SQL_CP_INSERT, 4, params, "storing change points"))
		rc = 0;
	trend_release(&tg);
	buf_release(&cps);
	return rc;
}

static int process(PGconn *c, struct group *g)
{
	const char *params[4] = {g->machine, g->test, g->variant, NULL};
	PGresult *names = db_exec(c, SQL_GROUP, 3, params), *kids = NULL;
	int rc = -1;

	if (!db_ok(names) || PQntuples(names) != 1) {
		db_log_error("reading the key group", c, names);
		goto out;
	}
	g->mname = PQgetvalue(names, 0, 0);
	g->suite = PQgetvalue(names, 0, 1);
	g->params = PQgetvalue(names, 0, 2);
	g->knobs = PQgetvalue(names, 0, 3);
	if (decide_commit(c, g, g->commit))
		goto out;
	{
		const char *kp[4] = {g->commit, g->machine, g->test, g->variant};
		kids = db_exec(c, SQL_CHILDREN, 4, kp);
	}
	if (!db_ok(kids)) {
		db_log_error("finding children", c, kids);
		goto out;
	}
	for (int i = 0; i < PQntuples(kids); i++)
		if (decide_commit(c, g, PQgetvalue(kids, i, 0)))
			goto out;
	rc = scan_history(c, g);
out:
	PQclear(names);
	PQclear(kids);
	return rc;
}

int regress_step(PGconn *c)
{
	PGresult *r = db_exec(c, SQL_CLAIM, 0, NULL);
	const char *params[5];
	struct group g;
	int rc;

	if (!db_ok(r)) {
		db_log_error("claiming queued decisions", c, r);
		PQclear(r);
		return -1;
	}
	if (PQntuples(r) == 0) {
		PQclear(r);
		return 0;
	}
	memset(&g, 0, sizeof(g));
	g.commit = PQgetvalue(r, 0, 0);
	g.machine = PQgetvalue(r, 0, 1);
	g.test = PQgetvalue(r, 0, 2);
	g.variant = PQgetvalue(r, 0, 3);
	for (int i = 0; i < 5; i++)
		params[i] = PQgetvalue(r, 0, i);

	rc = run_sql(c, "BEGIN", 0, NULL, "begin");
	if (!rc && !(rc = process(c, &g)))
		rc = run_sql(c, "COMMIT", 0, NULL, "commit");
	if (rc) {
		if (PQstatus(c) == CONNECTION_OK)
			PQclear(PQexec(c, "ROLLBACK"));
		run_sql(c, SQL_RELEASE, 4, params, "releasing a queue entry");
		PQclear(r);
		return -1;
	}
	/* a run that arrived meanwhile bumped the version: decide again later */
	{
		PGresult *d = db_exec(c, SQL_DONE, 5, params);
		if (db_ok(d) && !strcmp(PQcmdTuples(d), "0"))
			run_sql(c, SQL_RELEASE, 4, params, "releasing a queue entry");
		PQclear(d);
	}
	PQclear(r);
	return 1;
}

static void *worker_main(void *arg)
{
	int64_t partitions_at = now_us();

	(void)arg;
	while (!atomic_load(&worker_stop)) {
		PGconn *c = db_get();
		int rc = c ? regress_step(c) : -1;
		if (c && now_us() - partitions_at > 3600 * INT64_C(1000000)) {
			partitions_at = now_us();
			migrate_partitions(c);
		}
		if (rc <= 0)
			usleep(rc < 0 ? 5 * REGRESS_POLL_US : REGRESS_POLL_US);
	}
	db_release();
	return NULL;
}

int regress_configure(const char *floors, char *err, size_t errlen)
{
	return verdict_config_parse(&vcfg, floors, err, errlen);
}

int regress_start(double settle_s)
{
	alert_settle_s = settle_s;
	atomic_store(&worker_stop, 0);
	if (pthread_create(&worker_thread, NULL, worker_main, NULL))
		return -1;
	worker_running = 1;
	return 0;
}

void regress_stop(void)
{
	if (!worker_running)
		return;
	atomic_store(&worker_stop, 1);
	pthread_join(worker_thread, NULL);
	worker_running = 0;
	verdict_config_release(&vcfg);
}
