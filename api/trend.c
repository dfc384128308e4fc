/*
 * trend.c - GET /api/v1/trend: the history of one trend key (machine,
 * suite + params, metric; one series per variant unless variant= picks
 * one), in commit order, with the stored change points and decisions.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/db/db.h"
#include "lib/jsonw.h"
#include "server/reads/trend.h"
#include "server/reads/trend_view.h"
#include "lib/util.h"
#include "api/api.h"
#include "api/query.h"

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
	struct trend_figures f;

	trend_point_figures(p, &f);
	buf_putc(b, '{');
	buf_append(b, c->json, c->json_len); /* "commit" .. "date", made once per commit */
	if (p->narch) { /* archived runs: their summaries joined to the samples */
		buf_printf(b, ",\"n\":%zu,\"mean\":", f.n);
		jsonw_number(b, f.mean);
		buf_puts(b, ",\"stddev\":");
		jsonw_number(b, f.stddev);
		buf_puts(b, ",\"min\":");
		jsonw_number(b, f.min);
		buf_puts(b, ",\"max\":");
		jsonw_number(b, f.max);
		buf_printf(b, ",\"archived_runs\":%zu", p->narch);
	} else {
		buf_printf(b, ",\"n\":%zu,\"mean\":", f.n);
		put_num(b, f.mean, &m);
		buf_puts(b, ",\"stddev\":");
		jsonw_number(b, f.stddev);
		buf_puts(b, ",\"min\":");
		put_num(b, f.min, &m);
		buf_puts(b, ",\"max\":");
		put_num(b, f.max, &m);
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

/* One variant's series. Returns 0, or -1 after answering an error. */
static int put_series(PGconn *c, PGresult *keys, int row, struct buf *b, struct reply *rp)
{
	struct trend_series s;
	PGresult *failed = NULL;

	if (trend_series_load(c, keys, row, &s, &failed)) {
		reply_db_error(rp, c, failed, "loading the trend");
		PQclear(failed);
		return -1;
	}
	buf_printf(b, "{\"variant\":%s,\"points\":[", PQgetvalue(keys, row, TREND_KEY_KNOBS));
	for (size_t t = 0; t < s.g.ntrends; t++)
		for (size_t i = 0; i < s.g.trends[t].npoints; i++) {
			if (i)
				buf_putc(b, ',');
			put_point(b, &s.g.trends[t].points[i]);
		}
	buf_puts(b, "],\"change_points\":[");
	for (size_t i = 0; i < s.ncps; i++) {
		const struct trend_change_point *p = &s.cps[i];
		buf_printf(b, "%s{\"id\":%s,\"commit\":", i ? "," : "", p->id);
		jsonw_str(b, p->commit);
		buf_puts(b, ",\"prev_commit\":");
		jsonw_str(b, p->prev_commit);
		buf_puts(b, ",\"shift_pct\":");
		jsonw_number(b, p->shift_pct);
		buf_puts(b, ",\"ci95_pct\":[");
		jsonw_number(b, p->ci_lo_pct);
		buf_putc(b, ',');
		jsonw_number(b, p->ci_hi_pct);
		buf_puts(b, "],\"p_value\":");
		jsonw_number(b, p->p_value);
		buf_putc(b, '}');
	}
	buf_puts(b, "],\"decisions\":[");
	for (size_t i = 0; i < s.ndecisions; i++) {
		const struct trend_decision *d = &s.decisions[i];
		buf_printf(b, "%s{\"id\":%s,\"commit\":", i ? "," : "", d->id);
		jsonw_str(b, d->commit);
		buf_puts(b, ",\"verdict\":");
		jsonw_str(b, d->verdict);
		buf_puts(b, ",\"change_pct\":");
		jsonw_number(b, d->change_pct);
		buf_puts(b, ",\"change_abs\":");
		jsonw_number(b, d->change_abs);
		buf_puts(b, ",\"state\":");
		jsonw_str(b, d->state);
		buf_putc(b, '}');
	}
	trend_series_release(&s);
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
	keys = trend_keys(c, params[0], params[1], params[2], params[3], params[4]);
	if (!db_ok(keys)) {
		reply_db_error(rp, c, keys, "finding the trend");
		goto out;
	}
	if (PQntuples(keys) == 0) {
		reply_error(rp, 404, "not_found", NULL, "machine \"%s\" has no %s runs like that",
			    params[0], params[1]);
		goto out;
	}
	if (PQgetisnull(keys, 0, TREND_KEY_METRIC_ID)) {
		reply_error(rp, 404, "not_found", "metric", "no metric \"%s\"", params[2]);
		goto out;
	}
	for (int i = 1; i < PQntuples(keys); i++) {
		if (strcmp(PQgetvalue(keys, i, TREND_KEY_TEST_ID),
			   PQgetvalue(keys, 0, TREND_KEY_TEST_ID))) {
			struct buf list = BUF_INIT;
			for (int j = 0; j < PQntuples(keys); j++)
				if (!j || strcmp(PQgetvalue(keys, j, TREND_KEY_TEST_ID),
						 PQgetvalue(keys, j - 1, TREND_KEY_TEST_ID)))
					buf_printf(&list, "%s%s", list.len ? ", " : "",
						   PQgetvalue(keys, j, TREND_KEY_PARAMS));
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
	buf_printf(b, ",\"params\":%s,\"metric\":", PQgetvalue(keys, 0, TREND_KEY_PARAMS));
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
