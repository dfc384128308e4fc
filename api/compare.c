/*
 * compare.c - GET /api/v1/compare: resolve the refs, load each side's
 * samples (server/reads/compare_load.c), paired by trend key minus the qualified
 * fields, and answer rows as JSON, or the LKP / mmtests / CSV text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/compare_cmd.h"
#include "server/reads/compare_load.h"
#include "server/reads/compare_sides.h"
#include "server/db/db.h"
#include "lib/jsonw.h"
#include "lib/metric_role.h"
#include "lib/util.h"
#include "api/api.h"
#include "api/compare_req.h"
#include "api/query.h"

/* Load every side into q->set. 0, or -1 after answering an error. */
static int load_sides(PGconn *c, struct compare_req *q, const char *const *filters,
		      struct reply *rp)
{
	struct cmp_filter f[COMPARE_SIDES_MAX];
	char *qual[COMPARE_SIDES_MAX] = {0};
	int status = 0, rc;

	for (int i = 0; i < q->nrefs; i++) {
		qual[i] = jsonw_dump(q->refs[i].qual, 1);
		f[i] = (struct cmp_filter){q->refs[i].commit_ids, filters[0], qual[i], filters[1],
					   filters[2], filters[3], filters[4], filters[5]};
	}
	rc = cmp_load_sides(c, &q->set, q->nrefs, f, q->runs, q->run_ids, &status);
	if (rc)
		reply_db_status(rp, status ? status : 500, "loading samples");
	for (int i = 0; i < q->nrefs; i++)
		free(qual[i]);
	return rc;
}

static void put_side_ref(struct buf *b, const struct compare_req *q, int i)
{
	const struct ref *r = &q->refs[i];
	buf_puts(b, "{\"ref\":");
	jsonw_str(b, r->text);
	buf_puts(b, ",\"commit\":");
	jsonw_str(b, r->sha);
	buf_puts(b, ",\"subject\":");
	jsonw_str(b, r->subject);
	buf_puts(b, ",\"qualifiers\":");
	jsonw_value(b, r->qual, 1);
	buf_printf(b, ",\"runs\":%zu}", q->runs[i]);
}

static void put_summary(struct buf *b, const struct cmp_side *s, size_t runs)
{
	buf_printf(b, "{\"n\":%zu,\"runs\":%zu,\"mean\":", s->n, runs);
	jsonw_number(b, s->mean);
	buf_puts(b, ",\"stddev_pct\":");
	jsonw_number(b, s->stddev_pct);
	buf_puts(b, ",\"min\":");
	jsonw_number(b, s->min);
	buf_puts(b, ",\"max\":");
	jsonw_number(b, s->max);
	buf_putc(b, '}');
}

static void put_row(struct buf *b, const struct cmp_row *row, const void *arg)
{
	const struct compare_req *q = arg;
	const struct cmp_key *k = row->key;
	const char *why;
	int rank;

	buf_puts(b, "{\"machine\":");
	jsonw_str(b, k->machine);
	buf_puts(b, ",\"suite\":");
	jsonw_str(b, k->suite);
	buf_printf(b, ",\"params\":%s,\"variant\":%s,\"metric\":", k->params, k->variant);
	jsonw_str(b, k->metric);
	buf_puts(b, ",\"direction\":");
	jsonw_str(b, direction_name(k->direction));
	buf_puts(b, ",\"target_ref\":");
	jsonw_str(b, q->refs[row->target].text);
	buf_puts(b, ",\"base\":");
	put_summary(b, &row->base, k->cell[0].nruns);
	buf_puts(b, ",\"target\":");
	put_summary(b, &row->tgt, k->cell[row->target].nruns);
	buf_puts(b, ",\"change_pct\":");
	jsonw_number(b, row->change_pct);
	buf_puts(b, ",\"change_abs\":");
	jsonw_number(b, row->change_abs);
	buf_puts(b, ",\"welch\":");
	if (row->welch_ok) {
		buf_puts(b, "{\"p_value\":");
		jsonw_number(b, row->welch.p);
		buf_puts(b, ",\"t\":");
		jsonw_number(b, row->welch.t);
		buf_puts(b, ",\"df\":");
		jsonw_number(b, row->welch.df);
		buf_puts(b, ",\"ci95\":[");
		jsonw_number(b, row->welch.ci_lo);
		buf_putc(b, ',');
		jsonw_number(b, row->welch.ci_hi);
		buf_puts(b, "],\"ci95_pct\":[");
		jsonw_number(b, row->welch.ci_lo_pct);
		buf_putc(b, ',');
		jsonw_number(b, row->welch.ci_hi_pct);
		buf_puts(b, "]}");
	} else {
		buf_puts(b, "null");
	}
	buf_printf(b, ",\"lkp_changed\":%s,\"verdict\":\"%s\",\"role\":\"%s\"",
		   row->lkp_changed ? "true" : "false", verdict_name(row->verdict),
		   metric_role_name(metric_role_rank(k->metric, k->suite, &rank)));
	if (rank >= 0)
		buf_printf(b, ",\"kpi_rank\":%d", rank);
	if ((why = compare_cmd_not_judged(q, k->suite, row->target))) {
		buf_puts(b, ",\"judged\":false,\"not_judged\":");
		jsonw_str(b, why);
	}
	buf_putc(b, '}');
}

struct env_out {
	const struct compare_req *q;
	struct buf *b;
	int first;
};

static void put_env_item(void *arg, const char *kind, const char *key, int target, json_t *base,
			 json_t *tgt)
{
	struct env_out *o = arg;
	struct buf *b = o->b;

	if (!o->first)
		buf_putc(b, ',');
	o->first = 0;
	buf_puts(b, "{\"kind\":");
	jsonw_str(b, kind);
	buf_puts(b, ",\"key\":");
	jsonw_str(b, key);
	buf_puts(b, ",\"target_ref\":");
	jsonw_str(b, o->q->refs[target].text);
	buf_puts(b, ",\"base\":");
	jsonw_value(b, base, 1);
	buf_puts(b, ",\"target\":");
	jsonw_value(b, tgt, 1);
	buf_putc(b, '}');
}

/* environment_diff: every config option, cmdline, knob or machine fact whose
 * values differ between the base's runs and a target's. */
static int put_env_diff(PGconn *c, const struct compare_req *q, struct buf *b,
			struct reply *rp)
{
	json_t *env[COMPARE_SIDES_MAX] = {0};
	struct env_out o = {q, b, 1};
	PGresult *failed = NULL;
	int rc = -1;

	if (cmp_load_env(c, q->nrefs, q->run_ids, env, &failed)) {
		reply_db_error(rp, c, failed, "reading run environments");
		PQclear(failed);
		goto out;
	}
	buf_putc(b, '[');
	cmp_env_diff(env, q->nrefs, put_env_item, &o);
	compare_cmd_env(q, b, &o.first);
	buf_putc(b, ']');
	rc = 0;
out:
	for (int s = 0; s < q->nrefs; s++)
		json_decref(env[s]);
	return rc;
}

static int row_shown(const struct cmp_row *row, const void *arg)
{
	return compare_row_shown(arg, row);
}

static int answer_json(PGconn *c, const struct compare_req *q, struct reply *rp)
{
	struct buf *b = &rp->body;

	buf_puts(b, "{\"base\":");
	put_side_ref(b, q, 0);
	buf_puts(b, ",\"targets\":[");
	for (int i = 1; i < q->nrefs; i++) {
		if (i > 1)
			buf_putc(b, ',');
		put_side_ref(b, q, i);
	}
	buf_puts(b, "],\"environment_diff\":");
	if (put_env_diff(c, q, b, rp))
		return -1;
	buf_puts(b, ",\"rows\":[");
	cmp_rows_write(&q->set, q->nrefs, row_shown, put_row, q, b);
	buf_puts(b, "]}");
	rp->status = 200;
	rp->content_type = "application/json";
	return 0;
}

/* Read the request's refs and filters. Returns 0 or -1 (answered 400). */
static int read_request(struct request *rq, struct reply *rp, struct compare_req *q,
			const char **filters, struct buf *like, struct buf *qual_keys,
			char **variant, char **params)
{
	const char *targets[COMPARE_SIDES_MAX];
	const char *base = http_query(rq, "base");
	int nt = http_query_all(rq, "target", targets, COMPARE_SIDES_MAX);
	json_t *keys = json_object();
	const char *key;
	json_t *v;

	if (!base) {
		reply_error(rp, 400, "invalid", "base", "base=REF is required");
		goto fail;
	}
	if (nt < 1 || nt > COMPARE_SIDES_MAX - 1) {
		reply_error(rp, 400, "invalid", "target", "give 1 to %d target=REF",
			    COMPARE_SIDES_MAX - 1);
		goto fail;
	}
	if (ref_parse(base, &q->refs[0], rp, "base"))
		goto fail;
	q->nrefs = 1;
	for (int i = 0; i < nt; i++) {
		char field[32];
		snprintf(field, sizeof(field), nt > 1 ? "target[%d]" : "target", i);
		q->nrefs++;
		if (ref_parse(targets[i], &q->refs[i + 1], rp, field))
			goto fail;
	}
	/* the qualified fields of every side are left out of the pairing key */
	for (int i = 0; i < q->nrefs; i++)
		json_object_foreach(q->refs[i].qual, key, v)
			json_object_set(keys, key, json_true());
	buf_putc(qual_keys, '{');
	{
		int first = 1;
		json_object_foreach(keys, key, v) {
			buf_printf(qual_keys, "%s\"%s\"", first ? "" : ",", key);
			first = 0;
		}
	}
	buf_putc(qual_keys, '}');
	json_decref(keys);
	keys = NULL;

	q->metric_glob = http_query(rq, "metric");
	q->operand = http_query(rq, "operand");
	q->significant = query_flag(http_query(rq, "significant"));
	if (q->significant < 0) {
		reply_error(rp, 400, "invalid", "significant", "significant must be 0 or 1");
		goto fail;
	}
	if (q->metric_glob)
		query_glob_like(like, q->metric_glob);
	filters[0] = buf_str(qual_keys);
	filters[1] = http_query(rq, "suite");
	filters[2] = http_query(rq, "machine");
	filters[3] = q->metric_glob ? buf_str(like) : NULL;
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "params" : "variant";
		const char *text = http_query(rq, name);
		json_t *pairs;
		if (!text)
			continue;
		pairs = query_pairs(text);
		if (!pairs) {
			reply_error(rp, 400, "invalid", name, "%s must read key=value,key=value", name);
			goto fail;
		}
		*(i ? params : variant) = jsonw_dump(pairs, 1);
		json_decref(pairs);
	}
	filters[4] = *variant;
	filters[5] = *params;
	return 0;
fail:
	json_decref(keys);
	return -1;
}

void api_compare(struct request *rq, struct reply *rp)
{
	struct compare_req q;
	struct buf like = BUF_INIT, qual_keys = BUF_INIT;
	const char *filters[6] = {0};
	const char *format = http_query(rq, "format");
	char *variant = NULL, *params = NULL;
	PGconn *c;

	memset(&q, 0, sizeof(q));
	if (format && strcmp(format, "json") && strcmp(format, "lkp") && strcmp(format, "mmtests") &&
	    strcmp(format, "csv")) {
		reply_error(rp, 400, "invalid", "format", "format must be json, lkp, mmtests or csv");
		return;
	}
	if (read_request(rq, rp, &q, filters, &like, &qual_keys, &variant, &params))
		goto out;
	if (!(c = db_get())) {
		reply_unavailable(rp);
		goto out;
	}
	for (int i = 0; i < q.nrefs; i++) {
		char field[32];
		snprintf(field, sizeof(field), i == 0 ? "base" : q.nrefs > 2 ? "target[%d]" : "target",
			 i - 1);
		if (ref_resolve(c, &q.refs[i], rp, field))
			goto out;
	}
	cmp_set_init(&q.set, (size_t)q.nrefs);
	if (load_sides(c, &q, filters, rp))
		goto out;
	for (int i = 0; i < q.nrefs; i++) {
		if (!q.runs[i] && json_object_size(q.refs[i].qual)) {
			char field[32];
			snprintf(field, sizeof(field),
				 i == 0 ? "base" : q.nrefs > 2 ? "target[%d]" : "target", i - 1);
			reply_error(rp, 404, "not_found", field,
				    "no run of \"%s\" matches the qualifiers of \"%s\"",
				    q.refs[i].kernel, q.refs[i].text);
			goto out;
		}
	}
	cmp_set_sort(&q.set);
	if (compare_cmd_load(c, &q)) {
		reply_db_status(rp, 500, "reading the runs' commands");
		goto out;
	}
	if (!format || !strcmp(format, "json")) {
		answer_json(c, &q, rp);
	} else {
		char err[256];
		rp->status = 200;
		rp->content_type = "text/plain; charset=utf-8";
		if (!strcmp(format, "lkp")) {
			compare_render_lkp(&q, &rp->body);
		} else if (!strcmp(format, "csv")) {
			compare_render_csv(&q, &rp->body);
		} else if (compare_render_mmtests(&q, &rp->body, err, sizeof(err))) {
			reply_error(rp, 400, "invalid", "operand", "%s", err);
		}
	}
out:
	for (int i = 0; i < COMPARE_SIDES_MAX; i++) {
		ref_release(&q.refs[i]);
		free(q.run_ids[i]);
	}
	cmp_set_release(&q.set);
	compare_cmd_release(&q);
	buf_release(&like);
	buf_release(&qual_keys);
	free(variant);
	free(params);
}
