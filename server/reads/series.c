/*
 * series.c - a patch series' versions and patches: the patches of a version
 * read with their KPI decisions against the base, put in commit order
 * (commit_order), their base named; a version's last patch compared with
 * the previous version's (cmp_load_side, cmp_row_compute), KPIs only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/db/db.h"
#include "lib/metric_role.h"
#include "lib/util.h"
#include "server/reads/commit_order.h"
#include "server/reads/compare_load.h"
#include "server/reads/series.h"

static const char SQL_VERSIONS[] =
	"SELECT series, series_name, series_version FROM commits"
	" WHERE (series = $1 OR series_name = $1) AND series_version IS NOT NULL"
	" GROUP BY series, series_name, series_version ORDER BY series_version";

/* The patches of one version, with their KPI decisions against the base. */
static const char SQL_PATCHES[] =
	"SELECT c.id, c.sha, c.parent_sha, c.subject,"
	" extract(epoch FROM coalesce(c.committed_at, c.created_at)),"
	" (SELECT count(*) FROM run r WHERE r.commit_id = c.id AND r.valid),"
	" coalesce((SELECT jsonb_agg(jsonb_build_object('id', d.id, 'machine', m.name, 'suite',"
	"  t.suite, 'params', t.params, 'variant', v.knobs, 'metric', mt.name, 'direction',"
	"  d.direction, 'base_commit', b.sha, 'base_kind', d.base_kind, 'verdict', d.verdict,"
	"  'change_pct', d.change_pct, 'change_abs', d.change_abs, 'ci95_pct',"
	"  CASE WHEN d.ci_lo_pct IS NULL THEN NULL ELSE jsonb_build_array(d.ci_lo_pct,"
	"  d.ci_hi_pct) END, 'p_value', d.p_value, 'kpi_rank', d.kpi_rank)"
	"  ORDER BY d.kpi_rank, mt.name)"
	"  FROM decision d JOIN machine m ON m.id = d.machine_id JOIN test t ON t.id = d.test_id"
	"  JOIN variant v ON v.id = d.variant_id JOIN metric mt ON mt.id = d.metric_id"
	"  JOIN commits b ON b.id = d.base_commit_id WHERE d.commit_id = c.id AND d.kpi),"
	"  '[]')::text"
	" FROM commits c WHERE c.series = $1";

static const char SQL_COMMIT[] =
	"SELECT id, sha, subject FROM commits WHERE sha = $1";

PGresult *series_versions(PGconn *c, const char *name)
{
	const char *params[1] = {name};

	return db_exec(c, SQL_VERSIONS, 1, params);
}

static const char *text_or_null(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

int series_version_load(PGconn *c, const char *series, struct series_version *v,
			PGresult **failed)
{
	const char *params[1] = {series};
	PGresult *r = db_exec(c, SQL_PATCHES, 1, params), *base = NULL;
	struct commit_node *nodes;
	int n;

	memset(v, 0, sizeof(*v));
	if (!db_ok(r)) {
		*failed = r;
		return -1;
	}
	n = PQntuples(r);
	nodes = xcalloc((size_t)n + 1, sizeof(*nodes));
	for (int i = 0; i < n; i++) {
		nodes[i].sha = PQgetvalue(r, i, 1);
		nodes[i].parent = PQgetisnull(r, i, 2) ? NULL : PQgetvalue(r, i, 2);
		nodes[i].when = strtod(PQgetvalue(r, i, 4), NULL);
		nodes[i].index = (size_t)i;
	}
	commit_order(nodes, (size_t)n);
	v->patches = xcalloc((size_t)n + 1, sizeof(*v->patches));
	v->npatches = (size_t)n;
	for (int k = 0; k < n; k++) {
		int i = (int)nodes[k].index;
		struct series_patch *p = &v->patches[k];
		p->id = strtol(PQgetvalue(r, i, 0), NULL, 10);
		p->sha = PQgetvalue(r, i, 1);
		p->parent = text_or_null(r, i, 2);
		p->subject = text_or_null(r, i, 3);
		p->runs = PQgetvalue(r, i, 5);
		p->kpis = PQgetvalue(r, i, 6);
	}
	free(nodes);
	v->res[0] = r;
	/* the base: the first patch's parent, with its subject when it is stored
	 * (a failed read names the parent alone) */
	if (n && v->patches[0].parent) {
		const char *bp[1] = {v->patches[0].parent};
		base = db_exec(c, SQL_COMMIT, 1, bp);
		if (base && db_ok(base) && PQntuples(base) == 1) {
			v->base_commit = PQgetvalue(base, 0, 1);
			v->base_subject = text_or_null(base, 0, 2);
			v->res[1] = base;
		} else {
			v->base_commit = v->patches[0].parent;
			PQclear(base);
		}
	}
	return 0;
}

void series_version_release(struct series_version *v)
{
	free(v->patches);
	PQclear(v->res[0]);
	PQclear(v->res[1]);
	memset(v, 0, sizeof(*v));
}

int series_versus_load(PGconn *c, long from, long to, struct series_versus *v)
{
	char fids[32], tids[32];
	struct cmp_filter ff = {fids, "{}", "{}", NULL, NULL, NULL, NULL, NULL};
	struct cmp_filter ft = {tids, "{}", "{}", NULL, NULL, NULL, NULL, NULL};
	size_t nf = 0, nt = 0;
	PGresult *failed = NULL;

	memset(v, 0, sizeof(*v));
	snprintf(fids, sizeof(fids), "{%ld}", from);
	snprintf(tids, sizeof(tids), "{%ld}", to);
	cmp_set_init(&v->set, 2);
	if (cmp_load_side(c, &v->set, 0, &ff, &nf, NULL, &failed) ||
	    cmp_load_side(c, &v->set, 1, &ft, &nt, NULL, &failed)) {
		db_log_error("loading a version comparison", c, failed);
		PQclear(failed);
		cmp_set_release(&v->set);
		memset(v, 0, sizeof(*v));
		return -1;
	}
	cmp_set_sort(&v->set);
	v->rows = xcalloc(v->set.nkeys + 1, sizeof(*v->rows));
	for (size_t i = 0; i < v->set.nkeys; i++) {
		const struct cmp_key *k = v->set.keys[i];
		if (metric_role(k->metric, k->suite) != ROLE_KPI ||
		    cmp_row_compute(k, 1, &v->rows[v->nrows]))
			continue;
		v->nrows++;
	}
	return 0;
}

void series_versus_release(struct series_versus *v)
{
	free(v->rows);
	cmp_set_release(&v->set);
	memset(v, 0, sizeof(*v));
}
