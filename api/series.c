/*
 * series.c - /api/v1/series: patch series (`NAME vN`), their versions and
 * patches; for one series, each patch's KPI decisions against the series
 * base, and each version's last patch against the previous version's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/reads/commit_order.h"
#include "server/reads/compare_load.h"
#include "server/db/db.h"
#include "lib/jsonw.h"
#include "lib/metric_role.h"
#include "server/stats/stats_lkp.h"
#include "lib/util.h"
#include "api/api.h"

static const char SQL_LIST[] =
	"WITH f AS (SELECT c.series_name AS name,"
	"  array_agg(DISTINCT c.series_version ORDER BY c.series_version) AS versions,"
	"  count(*) AS patches, max(c.committed_at) AS last_date,"
	"  (SELECT count(*) FROM run r JOIN commits c2 ON c2.id = r.commit_id"
	"   WHERE c2.series_name = c.series_name) AS runs"
	" FROM commits c WHERE c.series_name IS NOT NULL"
	"  AND ($1::text IS NULL OR c.series_name = $1) GROUP BY c.series_name)"
	" SELECT (SELECT count(*) FROM f), coalesce((SELECT json_agg(p) FROM (SELECT * FROM f"
	"  ORDER BY last_date DESC NULLS LAST, name LIMIT $2 OFFSET $3) p), '[]')";

void api_series_list(struct request *rq, struct reply *rp)
{
	const char *filters[1] = {http_query(rq, "name")};

	api_list(rq, rp, SQL_LIST, 1, filters);
}

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

/* KPI rows of `to` against `from` (the previous version's last patch). */
static int put_versus(PGconn *c, long from, long to, struct buf *b)
{
	char fids[32], tids[32];
	struct cmp_filter ff = {fids, "{}", "{}", NULL, NULL, NULL, NULL, NULL};
	struct cmp_filter ft = {tids, "{}", "{}", NULL, NULL, NULL, NULL, NULL};
	struct cmp_set set;
	size_t nf = 0, nt = 0;
	PGresult *failed = NULL;
	int first = 1;

	snprintf(fids, sizeof(fids), "{%ld}", from);
	snprintf(tids, sizeof(tids), "{%ld}", to);
	cmp_set_init(&set, 2);
	if (cmp_load_side(c, &set, 0, &ff, &nf, NULL, &failed) ||
	    cmp_load_side(c, &set, 1, &ft, &nt, NULL, &failed)) {
		db_log_error("loading a version comparison", c, failed);
		PQclear(failed);
		cmp_set_release(&set);
		return -1;
	}
	cmp_set_sort(&set);
	buf_putc(b, '[');
	for (size_t i = 0; i < set.nkeys; i++) {
		const struct cmp_key *k = set.keys[i];
		struct cmp_row row;
		if (metric_role(k->metric, k->suite) != ROLE_KPI || cmp_row_compute(k, 1, &row))
			continue;
		buf_puts(b, first ? "{\"machine\":" : ",{\"machine\":");
		first = 0;
		jsonw_str(b, k->machine);
		buf_puts(b, ",\"suite\":");
		jsonw_str(b, k->suite);
		buf_printf(b, ",\"params\":%s,\"variant\":%s,\"metric\":", k->params, k->variant);
		jsonw_str(b, k->metric);
		buf_printf(b, ",\"direction\":\"%s\",\"base_mean\":", direction_name(k->direction));
		jsonw_number(b, row.base.mean);
		buf_puts(b, ",\"target_mean\":");
		jsonw_number(b, row.tgt.mean);
		buf_puts(b, ",\"change_pct\":");
		jsonw_number(b, row.change_pct);
		buf_puts(b, ",\"ci95_pct\":");
		if (row.welch_ok) {
			buf_putc(b, '[');
			jsonw_number(b, row.welch.ci_lo_pct);
			buf_putc(b, ',');
			jsonw_number(b, row.welch.ci_hi_pct);
			buf_putc(b, ']');
		} else {
			buf_puts(b, "null");
		}
		buf_printf(b, ",\"verdict\":\"%s\"}", verdict_name(row.verdict));
	}
	buf_putc(b, ']');
	cmp_set_release(&set);
	return 0;
}

/* One version: patches in order, the base, KPI decisions. *last gets the id of
 * the last patch. Returns 0, or -1 after answering an error. */
static int put_version(PGconn *c, PGresult *versions, int vi, struct buf *b, long *last,
		       struct reply *rp)
{
	const char *params[1] = {PQgetvalue(versions, vi, 0)};
	PGresult *r = db_exec(c, SQL_PATCHES, 1, params), *base = NULL;
	struct commit_node *nodes;
	int n;

	if (!db_ok(r)) {
		reply_db_error(rp, c, r, "reading the series");
		PQclear(r);
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
	buf_puts(b, "{\"series\":");
	jsonw_str(b, PQgetvalue(versions, vi, 0));
	buf_printf(b, ",\"version\":%s,\"base\":", PQgetvalue(versions, vi, 2));
	if (n && !PQgetisnull(r, (int)nodes[0].index, 2)) {
		const char *bp[1] = {PQgetvalue(r, (int)nodes[0].index, 2)};
		base = db_exec(c, SQL_COMMIT, 1, bp);
	}
	if (base && db_ok(base) && PQntuples(base) == 1) {
		buf_puts(b, "{\"commit\":");
		jsonw_str(b, PQgetvalue(base, 0, 1));
		buf_puts(b, ",\"subject\":");
		jsonw_str(b, PQgetisnull(base, 0, 2) ? NULL : PQgetvalue(base, 0, 2));
		buf_putc(b, '}');
	} else if (n && !PQgetisnull(r, (int)nodes[0].index, 2)) {
		buf_puts(b, "{\"commit\":");
		jsonw_str(b, PQgetvalue(r, (int)nodes[0].index, 2));
		buf_puts(b, ",\"subject\":null}");
	} else {
		buf_puts(b, "null");
	}
	PQclear(base);
	buf_puts(b, ",\"patches\":[");
	for (int k = 0; k < n; k++) {
		int i = (int)nodes[k].index;
		buf_printf(b, "%s{\"position\":%d,\"commit\":", k ? "," : "", k + 1);
		jsonw_str(b, PQgetvalue(r, i, 1));
		buf_puts(b, ",\"parent\":");
		jsonw_str(b, PQgetisnull(r, i, 2) ? NULL : PQgetvalue(r, i, 2));
		buf_puts(b, ",\"subject\":");
		jsonw_str(b, PQgetisnull(r, i, 3) ? NULL : PQgetvalue(r, i, 3));
		buf_printf(b, ",\"runs\":%s,\"kpis\":%s}", PQgetvalue(r, i, 5), PQgetvalue(r, i, 6));
	}
	buf_putc(b, ']');
	*last = n ? strtol(PQgetvalue(r, (int)nodes[n - 1].index, 0), NULL, 10) : 0;
	free(nodes);
	PQclear(r);
	return 0;
}

void api_series_get(struct request *rq, struct reply *rp)
{
	const char *params[1] = {rq->arg};
	struct buf *b = &rp->body;
	PGresult *v = NULL;
	long prev = 0;
	PGconn *c = db_get();

	if (!c) {
		reply_unavailable(rp);
		return;
	}
	v = db_exec(c, SQL_VERSIONS, 1, params);
	if (!db_ok(v)) {
		reply_db_error(rp, c, v, "reading the series");
		goto out;
	}
	if (PQntuples(v) == 0) {
		reply_error(rp, 404, "not_found", "name", "no series \"%s\"", rq->arg);
		goto out;
	}
	buf_puts(b, "{\"name\":");
	jsonw_str(b, PQgetvalue(v, 0, 1));
	buf_puts(b, ",\"versions\":[");
	for (int i = 0; i < PQntuples(v); i++) {
		long last = 0;
		if (i)
			buf_putc(b, ',');
		if (put_version(c, v, i, b, &last, rp))
			goto out;
		buf_puts(b, ",\"vs_previous\":");
		if (prev && last) {
			if (put_versus(c, prev, last, b)) {
				buf_reset(b);
				reply_error(rp, 503, "unavailable", NULL, "comparing versions failed");
				goto out;
			}
		} else {
			buf_puts(b, "null");
		}
		buf_putc(b, '}');
		prev = last;
	}
	buf_puts(b, "]}");
	rp->status = 200;
	rp->content_type = "application/json";
out:
	PQclear(v);
}
