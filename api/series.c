/*
 * series.c - /api/v1/series: patch series (`NAME vN`), their versions and
 * patches; for one series, each patch's KPI decisions against the series
 * base, and each version's last patch against the previous version's.
 */
#include <string.h>

#include "server/db/db.h"
#include "lib/jsonw.h"
#include "server/reads/series.h"
#include "server/robot/posted.h"
#include "server/stats/compare.h"
#include "api/api.h"

static const char SQL_LIST[] =
	"WITH n AS (SELECT series_name AS name FROM commits WHERE series_name IS NOT NULL"
	"  UNION SELECT name FROM posted_series),"
	" f AS (SELECT n.name,"
	"  (SELECT array_agg(DISTINCT c.series_version ORDER BY c.series_version) FROM commits c"
	"   WHERE c.series_name = n.name) AS versions,"
	"  (SELECT count(*) FROM commits c WHERE c.series_name = n.name) AS patches,"
	"  (SELECT max(c.committed_at) FROM commits c WHERE c.series_name = n.name) AS last_date,"
	"  (SELECT count(*) FROM run r JOIN commits c2 ON c2.id = r.commit_id"
	"   WHERE c2.series_name = n.name) AS runs,"
	"  (SELECT json_agg(json_build_object('version', s.version, 'total', s.total, 'state',"
	"    s.state, 'detail', s.state_detail, 'posted_at', s.posted_at, 'author', s.author_name,"
	"    'subject', s.subject, 'mail', (SELECT a.state FROM plan_target pt JOIN alert a"
	"     ON a.plan_target_id = pt.id WHERE pt.series_id = s.id ORDER BY a.id DESC LIMIT 1),"
	"    'first_bad_position', (SELECT max(pt.first_bad_position) FROM plan_target pt"
	"     WHERE pt.series_id = s.id)) ORDER BY s.version, s.id)"
	"   FROM posted_series s WHERE s.name = n.name) AS posted,"
	"  (SELECT max(s.created_at) FROM posted_series s WHERE s.name = n.name) AS posted_last"
	" FROM n WHERE ($1::text IS NULL OR n.name = $1))"
	" SELECT (SELECT count(*) FROM f), coalesce((SELECT json_agg(p) FROM (SELECT name, versions,"
	"  patches, last_date, runs, posted FROM f"
	"  ORDER BY greatest(last_date, posted_last) DESC NULLS LAST, name LIMIT $2 OFFSET $3) p),"
	"  '[]')";

void api_series_list(struct request *rq, struct reply *rp)
{
	const char *filters[1] = {http_query(rq, "name")};

	api_list(rq, rp, SQL_LIST, 1, filters);
}

/* KPI rows of `to` against `from` (the previous version's last patch). */
static int put_versus(PGconn *c, long from, long to, struct buf *b)
{
	struct series_versus v;

	if (series_versus_load(c, from, to, &v))
		return -1;
	buf_putc(b, '[');
	for (size_t i = 0; i < v.nrows; i++) {
		const struct cmp_row *row = &v.rows[i];
		const struct cmp_key *k = row->key;
		buf_puts(b, i == 0 ? "{\"machine\":" : ",{\"machine\":");
		jsonw_str(b, k->machine);
		buf_puts(b, ",\"suite\":");
		jsonw_str(b, k->suite);
		buf_printf(b, ",\"params\":%s,\"variant\":%s,\"metric\":", k->params, k->variant);
		jsonw_str(b, k->metric);
		buf_printf(b, ",\"direction\":\"%s\",\"base_mean\":", direction_name(k->direction));
		jsonw_number(b, row->base.mean);
		buf_puts(b, ",\"target_mean\":");
		jsonw_number(b, row->tgt.mean);
		buf_puts(b, ",\"change_pct\":");
		jsonw_number(b, row->change_pct);
		buf_puts(b, ",\"ci95_pct\":");
		if (row->welch_ok) {
			buf_putc(b, '[');
			jsonw_number(b, row->welch.ci_lo_pct);
			buf_putc(b, ',');
			jsonw_number(b, row->welch.ci_hi_pct);
			buf_putc(b, ']');
		} else {
			buf_puts(b, "null");
		}
		buf_printf(b, ",\"verdict\":\"%s\"}", verdict_name(row->verdict));
	}
	buf_putc(b, ']');
	series_versus_release(&v);
	return 0;
}

/* One version: patches in order, the base, KPI decisions. *last gets the id of
 * the last patch. Returns 0, or -1 after answering an error. */
static int put_version(PGconn *c, PGresult *versions, int vi, struct buf *b, long *last,
		       struct reply *rp)
{
	struct series_version v;
	PGresult *failed = NULL;

	if (series_version_load(c, PQgetvalue(versions, vi, SERIES_V_SERIES), &v, &failed)) {
		reply_db_error(rp, c, failed, "reading the series");
		PQclear(failed);
		return -1;
	}
	buf_puts(b, "{\"series\":");
	jsonw_str(b, PQgetvalue(versions, vi, SERIES_V_SERIES));
	buf_printf(b, ",\"version\":%s,\"base\":", PQgetvalue(versions, vi, SERIES_V_VERSION));
	if (v.base_commit) {
		buf_puts(b, "{\"commit\":");
		jsonw_str(b, v.base_commit);
		buf_puts(b, ",\"subject\":");
		jsonw_str(b, v.base_subject);
		buf_putc(b, '}');
	} else {
		buf_puts(b, "null");
	}
	buf_puts(b, ",\"patches\":[");
	for (size_t k = 0; k < v.npatches; k++) {
		const struct series_patch *p = &v.patches[k];
		buf_printf(b, "%s{\"position\":%zu,\"commit\":", k ? "," : "", k + 1);
		jsonw_str(b, p->sha);
		buf_puts(b, ",\"parent\":");
		jsonw_str(b, p->parent);
		buf_puts(b, ",\"subject\":");
		jsonw_str(b, p->subject);
		buf_printf(b, ",\"runs\":%s,\"kpis\":%s}", p->runs, p->kpis);
	}
	buf_putc(b, ']');
	*last = v.npatches ? v.patches[v.npatches - 1].id : 0;
	series_version_release(&v);
	return 0;
}

void api_series_get(struct request *rq, struct reply *rp)
{
	struct buf *b = &rp->body, posted = BUF_INIT;
	PGresult *v = NULL;
	long prev = 0;
	PGconn *c = db_get();

	if (!c) {
		reply_unavailable(rp);
		return;
	}
	v = series_versions(c, rq->arg);
	if (!db_ok(v)) {
		reply_db_error(rp, c, v, "reading the series");
		goto out;
	}
	if (posted_versions_json(c, rq->arg, &posted)) {
		reply_db_status(rp, 503, "reading the posted series");
		goto out;
	}
	if (PQntuples(v) == 0 && !strcmp(posted.data, "[]")) {
		reply_error(rp, 404, "not_found", "name", "no series \"%s\"", rq->arg);
		goto out;
	}
	buf_puts(b, "{\"name\":");
	jsonw_str(b, PQntuples(v) ? PQgetvalue(v, 0, SERIES_V_NAME) : rq->arg);
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
	buf_printf(b, "],\"posted\":%s}", posted.data);
	rp->status = 200;
	rp->content_type = "application/json";
out:
	buf_release(&posted);
	PQclear(v);
}
