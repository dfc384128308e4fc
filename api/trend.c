/*
 * trend.c - GET /api/v1/trend: the history of one trend key (machine,
 * suite + params, metric; one series per variant unless variant= picks
 * one), in commit order, with the stored change points and decisions.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/db/db.h"
#include "lib/jsonw.h"
#include "server/stats/stats.h"
#include "server/reads/trend.h"
#include "lib/util.h"
#include "api/api.h"
#include "api/query.h"

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

/* The text of the last number written, for writing it again as it is. */
struct num_memo {
	uint64_t bits;
	char text[40];
	size_t len; /* 0: none yet */
};

/* A number; when it is the memo's double, its text is copied, not made
 * again (a point of one sample is that number five times). */
static void put_num(struct buf *b, double d, struct num_memo *m)
{
	uint64_t bits;
	size_t at = b->len;

	memcpy(&bits, &d, sizeof(bits));
	if (m->len && bits == m->bits) {
		buf_append(b, m->text, m->len);
		return;
	}
	jsonw_number(b, d);
	if (b->len - at < sizeof(m->text)) {
		m->bits = bits;
		m->len = b->len - at;
		memcpy(m->text, b->data + at, m->len);
	}
}

static void put_point(struct buf *b, const struct trend_point *p)
{
	const struct trend_commit *c = p->commit;
	struct num_memo m = {0};

	buf_putc(b, '{');
	buf_append(b, c->json, c->json_len); /* "commit" .. "date", made once per commit */
	if (p->narch) { /* archived runs: their summaries joined to the samples */
		struct stats_moments all;
		stats_moments_of(p->samples, p->n, &all);
		stats_moments_merge(&all, &p->arch);
		buf_printf(b, ",\"n\":%zu,\"mean\":", all.n);
		jsonw_number(b, all.mean);
		buf_puts(b, ",\"stddev\":");
		jsonw_number(b, all.n > 1 ? stats_moments_stddev(&all) : 0);
		buf_puts(b, ",\"min\":");
		jsonw_number(b, all.min);
		buf_puts(b, ",\"max\":");
		jsonw_number(b, all.max);
		buf_printf(b, ",\"archived_runs\":%zu", p->narch);
	} else {
		buf_printf(b, ",\"n\":%zu,\"mean\":", p->n);
		put_num(b, stats_mean(p->samples, p->n), &m);
		buf_puts(b, ",\"stddev\":");
		jsonw_number(b, p->n > 1 ? stats_stddev(p->samples, p->n) : 0);
		buf_puts(b, ",\"min\":");
		put_num(b, stats_min(p->samples, p->n), &m);
		buf_puts(b, ",\"max\":");
		put_num(b, stats_max(p->samples, p->n), &m);
	}
	buf_puts(b, ",\"samples\":[");
	for (size_t i = 0; i < p->n; i++) {
		if (i)
			buf_putc(b, ',');
		put_num(b, p->samples[i], &m);
	}
	buf_puts(b, "],\"runs\":[");
	for (size_t i = 0; i < p->nruns; i++) {
		if (i)
			buf_putc(b, ',');
		jsonw_str(b, p->runs[i]);
	}
	buf_puts(b, "]}");
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

/* One variant's series. Returns 0, or -1 after answering an error. */
static int put_series(PGconn *c, PGresult *keys, int row, struct buf *b, struct reply *rp)
{
	const char *params[4] = {PQgetvalue(keys, row, 0), PQgetvalue(keys, row, 1),
				 PQgetvalue(keys, row, 3), PQgetvalue(keys, row, 5)};
	/* read in the same round trip as the history */
	const struct db_stmt extra[2] = {{SQL_CHANGE_POINTS, 4, params, 0, NULL, NULL},
					 {SQL_DECISIONS, 4, params, 0, NULL, NULL}};
	struct trend_group g;
	PGresult *failed = NULL, *r;
	const char **names; /* of the change points' commits (2 each), then the decisions' */
	size_t ncp;

	if (trend_load(c, params[0], params[1], params[2], params[3], 0, extra, 2, &g,
		       &failed) ||
	    !(names = extra_commit_names(c, &g, &ncp, &failed))) {
		reply_db_error(rp, c, failed, "loading the trend");
		PQclear(failed);
		trend_release(&g);
		return -1;
	}
	buf_printf(b, "{\"variant\":%s,\"points\":[", PQgetvalue(keys, row, 4));
	for (size_t t = 0; t < g.ntrends; t++)
		for (size_t i = 0; i < g.trends[t].npoints; i++) {
			if (i)
				buf_putc(b, ',');
			put_point(b, &g.trends[t].points[i]);
		}
	buf_puts(b, "],\"change_points\":[");
	r = g.extra_res[0];
	for (int i = 0; i < PQntuples(r); i++) {
		buf_printf(b, "%s{\"id\":%s,\"commit\":", i ? "," : "", PQgetvalue(r, i, 0));
		jsonw_str(b, names[2 * i]);
		buf_puts(b, ",\"prev_commit\":");
		jsonw_str(b, names[2 * i + 1]);
		buf_puts(b, ",\"shift_pct\":");
		jsonw_number(b, strtod(PQgetvalue(r, i, 3), NULL));
		buf_puts(b, ",\"ci95_pct\":[");
		jsonw_number(b, strtod(PQgetvalue(r, i, 4), NULL));
		buf_putc(b, ',');
		jsonw_number(b, strtod(PQgetvalue(r, i, 5), NULL));
		buf_puts(b, "],\"p_value\":");
		jsonw_number(b, strtod(PQgetvalue(r, i, 6), NULL));
		buf_putc(b, '}');
	}
	buf_puts(b, "],\"decisions\":[");
	r = g.extra_res[1];
	for (int i = 0; i < PQntuples(r); i++) {
		buf_printf(b, "%s{\"id\":%s,\"commit\":", i ? "," : "", PQgetvalue(r, i, 0));
		jsonw_str(b, names[ncp + i]);
		buf_puts(b, ",\"verdict\":");
		jsonw_str(b, PQgetvalue(r, i, 2));
		buf_puts(b, ",\"change_pct\":");
		jsonw_number(b, PQgetisnull(r, i, 3) ? NAN : strtod(PQgetvalue(r, i, 3), NULL));
		buf_puts(b, ",\"change_abs\":");
		jsonw_number(b, strtod(PQgetvalue(r, i, 4), NULL));
		buf_puts(b, ",\"state\":");
		jsonw_str(b, PQgetvalue(r, i, 5));
		buf_putc(b, '}');
	}
	free(names);
	trend_release(&g);
	buf_puts(b, "]}");
	return 0;
}

void api_trend(struct request *rq, struct reply *rp)
{
	static const char *const required[] = {"machine", "suite", "metric"};
	const char *params[5];
	char *pj = NULL, *vj = NULL;
	PGresult *keys = NULL;
	PGconn *c;
	struct buf *b = &rp->body;

	for (int i = 0; i < 3; i++) {
		params[i] = http_query(rq, required[i]);
		if (!params[i] || !*params[i]) {
			reply_error(rp, 400, "invalid", required[i], "%s= is required", required[i]);
			return;
		}
	}
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "variant" : "params";
		const char *text = http_query(rq, name);
		json_t *pairs = text ? query_pairs(text) : NULL;
		if (text && !pairs) {
			reply_error(rp, 400, "invalid", name, "%s must read key=value,key=value", name);
			goto out;
		}
		if (pairs)
			*(i ? &vj : &pj) = jsonw_dump(pairs, 1);
		json_decref(pairs);
	}
	params[3] = pj;
	params[4] = vj;
	if (!(c = db_get())) {
		reply_unavailable(rp);
		goto out;
	}
	keys = db_exec(c, SQL_KEYS, 5, params);
	if (!db_ok(keys)) {
		reply_db_error(rp, c, keys, "finding the trend");
		goto out;
	}
	if (PQntuples(keys) == 0) {
		reply_error(rp, 404, "not_found", NULL, "machine \"%s\" has no %s runs like that",
			    params[0], params[1]);
		goto out;
	}
	if (PQgetisnull(keys, 0, 5)) {
		reply_error(rp, 404, "not_found", "metric", "no metric \"%s\"", params[2]);
		goto out;
	}
	for (int i = 1; i < PQntuples(keys); i++) {
		if (strcmp(PQgetvalue(keys, i, 1), PQgetvalue(keys, 0, 1))) {
			struct buf list = BUF_INIT;
			for (int j = 0; j < PQntuples(keys); j++)
				if (!j || strcmp(PQgetvalue(keys, j, 1), PQgetvalue(keys, j - 1, 1)))
					buf_printf(&list, "%s%s", list.len ? ", " : "",
						   PQgetvalue(keys, j, 2));
			reply_error(rp, 400, "invalid", "params",
				    "several tests match; give params= one of %s", buf_str(&list));
			buf_release(&list);
			goto out;
		}
	}
	buf_puts(b, "{\"machine\":");
	jsonw_str(b, params[0]);
	buf_puts(b, ",\"suite\":");
	jsonw_str(b, params[1]);
	buf_printf(b, ",\"params\":%s,\"metric\":", PQgetvalue(keys, 0, 2));
	jsonw_str(b, params[2]);
	buf_puts(b, ",\"series\":[");
	for (int i = 0; i < PQntuples(keys); i++) {
		if (i)
			buf_putc(b, ',');
		if (put_series(c, keys, i, b, rp))
			goto out;
	}
	buf_puts(b, "]}");
	rp->status = 200;
	rp->content_type = "application/json";
out:
	PQclear(keys);
	free(pj);
	free(vj);
}
