/*
 * compare.c - GET /api/v1/compare: resolve the refs, load each side's
 * samples (server/reads/compare_load.c), paired by trend key minus the qualified
 * fields, and answer rows as JSON, or the LKP / mmtests / CSV text.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/compare_cmd.h"
#include "server/reads/compare_load.h"
#include "server/counters.h"
#include "server/db/db.h"
#include "lib/jsonw.h"
#include "lib/metric_role.h"
#include "lib/util.h"
#include "api/api.h"
#include "api/compare_req.h"
#include "api/query.h"

/* What a side's runs were, besides the kernel: config, cmdline, knobs, and the
 * machine facts as each run reported them. Each run's document is read (and
 * decompressed) once, its metrics dropped: reading "doc->'kernel'" and
 * "doc->'machine'" apart decompressed it four times, 5.0 ms a side of three
 * runs against 1.7 ms. */
static const char SQL_ENV[] =
	"WITH r AS MATERIALIZED (SELECT variant_id, d->'kernel' AS kernel, d->'machine' AS machine"
	"  FROM (SELECT variant_id, doc - 'metrics' AS d FROM run WHERE id = ANY($1::bigint[])"
	"  OFFSET 0) x)"
	" SELECT jsonb_build_object("
	" 'config', (SELECT coalesce(jsonb_object_agg(k, vals), '{}') FROM (SELECT e.key AS k,"
	"   jsonb_agg(DISTINCT e.value) AS vals FROM r, jsonb_each(r.kernel->'config') e"
	"   GROUP BY e.key) x),"
	" 'cmdline', (SELECT jsonb_build_object('cmdline', coalesce(jsonb_agg(DISTINCT"
	"   r.kernel->'cmdline') FILTER (WHERE r.kernel ? 'cmdline'), '[]')) FROM r),"
	" 'variant', (SELECT coalesce(jsonb_object_agg(k, vals), '{}') FROM (SELECT e.key AS k,"
	"   jsonb_agg(DISTINCT e.value) AS vals FROM r JOIN variant v ON v.id = r.variant_id,"
	"   jsonb_each(v.knobs) e GROUP BY e.key) x),"
	" 'machine', (SELECT coalesce(jsonb_object_agg(k, vals), '{}') FROM (SELECT e.key AS k,"
	"   jsonb_agg(DISTINCT e.value) AS vals FROM r, jsonb_each(r.machine) e"
	"   GROUP BY e.key) x))::text";

/* Load side into set; 0, or -1 with *failed (logged) and the HTTP status. */
static int load_side(PGconn *c, struct compare_req *q, struct cmp_set *set, int side,
		     const char *const *filters, int *status)
{
	char *qual = jsonw_dump(q->refs[side].qual, 1);
	struct cmp_filter f = {q->refs[side].commit_ids, filters[0], qual, filters[1], filters[2],
			       filters[3], filters[4], filters[5]};
	PGresult *failed = NULL;
	int rc = cmp_load_side(c, set, side, &f, &q->runs[side], &q->run_ids[side], &failed);

	if (rc) {
		*status = db_http_status(c, failed);
		db_log_error("loading samples", c, failed);
	}
	PQclear(failed);
	free(qual);
	return rc;
}

/*
 * The targets, read by a helper thread on a connection of its own into a
 * set of their own while the request's thread reads the base, then merged:
 * reading a side is a statement at a time, so one side alone keeps neither
 * PostgreSQL nor kperfd busy. When the pool has no connection to spare,
 * the helper does nothing and the targets are read after the base.
 */
struct targets_job {
	struct compare_req *q;
	const char *const *filters;
	struct cmp_set set;
	int done, status; /* done: read (status 0) or failed (its HTTP status) */
	int reading;      /* the request reads a standby: so does the helper */
};

static void *load_targets(void *arg)
{
	struct targets_job *j = arg;
	PGconn *c;

	db_reading(j->reading, NULL);
	c = db_try_get();

	if (c) {
		j->done = 1;
		for (int i = 1; i < j->q->nrefs && !j->status; i++)
			if (load_side(c, j->q, &j->set, i, j->filters, &j->status) && !j->status)
				j->status = 500;
	}
	db_release();
	return NULL;
}

/* Move the target cells of every key of from into q's set. */
static void merge_targets(struct compare_req *q, struct cmp_set *from)
{
	for (size_t i = 0; i < from->nkeys; i++) {
		struct cmp_key *k = from->keys[i];
		struct cmp_key *to = cmp_set_key(&q->set, k->machine, k->suite, k->params,
						 k->variant, k->metric, k->direction);
		for (int s = 1; s < q->nrefs; s++) {
			struct cmp_cell empty = to->cell[s];
			to->cell[s] = k->cell[s];
			k->cell[s] = empty;
		}
	}
}

/* Load every side into q->set. 0, or -1 after answering an error. */
static int load_sides(PGconn *c, struct compare_req *q, const char *const *filters,
		      struct reply *rp)
{
	struct targets_job j = {q, filters, {0}, 0, 0, db_reading_now()};
	pthread_t helper;
	int helped, status = 0, rc = -1;

	cmp_set_init(&j.set, (size_t)q->nrefs);
	helped = pthread_create(&helper, NULL, load_targets, &j) == 0;
	if (load_side(c, q, &q->set, 0, filters, &status))
		goto out;
	if (helped)
		pthread_join(helper, NULL);
	helped = 0;
	if (j.done && j.status) {
		status = j.status;
		goto out;
	}
	if (j.done) {
		merge_targets(q, &j.set);
		counters.compare_reads_helper++;
	} else {
		for (int i = 1; i < q->nrefs; i++)
			if (load_side(c, q, &q->set, i, filters, &status))
				goto out;
		counters.compare_reads_request++;
	}
	rc = 0;
out:
	if (helped)
		pthread_join(helper, NULL);
	if (rc)
		reply_db_status(rp, status ? status : 500, "loading samples");
	cmp_set_release(&j.set);
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

static void put_row(struct buf *b, const struct compare_req *q, const struct cmp_row *row)
{
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

/* environment_diff: every config option, cmdline, knob or machine fact whose
 * values differ between the base's runs and a target's. */
static int put_env_diff(PGconn *c, const struct compare_req *q, struct buf *b,
			struct reply *rp)
{
	static const char *const kinds[] = {"config", "cmdline", "variant", "machine"};
	json_t *env[COMPARE_SIDES_MAX] = {0};
	int first = 1, rc = -1;

	for (int s = 0; s < q->nrefs; s++) {
		const char *params[1] = {q->run_ids[s]};
		PGresult *r = db_exec(c, SQL_ENV, 1, params);
		if (!db_ok(r) || PQntuples(r) != 1) {
			reply_db_error(rp, c, r, "reading run environments");
			PQclear(r);
			goto out;
		}
		env[s] = json_loads(PQgetvalue(r, 0, 0), 0, NULL);
		PQclear(r);
		if (!env[s])
			env[s] = json_object();
	}
	buf_putc(b, '[');
	for (int t = 1; t < q->nrefs; t++) {
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			json_t *bk = json_object_get(env[0], kinds[i]);
			json_t *tk = json_object_get(env[t], kinds[i]);
			json_t *keys = json_object();
			const char *key;
			json_t *v;

			json_object_foreach(bk, key, v)
				json_object_set(keys, key, json_true());
			json_object_foreach(tk, key, v)
				json_object_set(keys, key, json_true());
			json_object_foreach(keys, key, v) {
				json_t *bv = json_object_get(bk, key), *tv = json_object_get(tk, key);
				json_t *empty = json_array();
				if (!json_equal(bv ? bv : empty, tv ? tv : empty)) {
					if (!first)
						buf_putc(b, ',');
					first = 0;
					buf_puts(b, "{\"kind\":");
					jsonw_str(b, kinds[i]);
					buf_puts(b, ",\"key\":");
					jsonw_str(b, key);
					buf_puts(b, ",\"target_ref\":");
					jsonw_str(b, q->refs[t].text);
					buf_puts(b, ",\"base\":");
					jsonw_value(b, bv ? bv : empty, 1);
					buf_puts(b, ",\"target\":");
					jsonw_value(b, tv ? tv : empty, 1);
					buf_putc(b, '}');
				}
				json_decref(empty);
			}
			json_decref(keys);
		}
	}
	compare_cmd_env(q, b, &first);
	buf_putc(b, ']');
	rc = 0;
out:
	for (int s = 0; s < q->nrefs; s++)
		json_decref(env[s]);
	return rc;
}

/* Rows of keys [from, to), each after a comma but the first. */
struct rows_job {
	const struct compare_req *q;
	size_t from, to;
	struct buf *out;
	size_t nrows;
};

static void *put_rows(void *arg)
{
	struct rows_job *j = arg;

	for (size_t i = j->from; i < j->to; i++) {
		for (int t = 1; t < j->q->nrefs; t++) {
			struct cmp_row row;
			if (cmp_row_compute(j->q->set.keys[i], t, &row) ||
			    !compare_row_shown(j->q, &row))
				continue;
			if (j->nrows++)
				buf_putc(j->out, ',');
			put_row(j->out, j->q, &row);
		}
	}
	return NULL;
}

/*
 * Many rows are computed and written by two threads, each half of the keys:
 * PostgreSQL has nothing to do meanwhile, and the rows of a 5,000-metric
 * compare take ~25 ms (Welch quantiles, then 3 MB of numbers).
 */
#define ROWS_SPLIT_MIN 1000

static void put_all_rows(const struct compare_req *q, struct buf *b)
{
	struct buf tail = BUF_INIT;
	struct rows_job j[2] = {{q, 0, q->set.nkeys, b, 0}, {q, 0, 0, &tail, 0}};
	pthread_t helper;
	int split = 0;

	if (q->set.nkeys >= ROWS_SPLIT_MIN) {
		j[0].to = j[1].from = q->set.nkeys / 2;
		j[1].to = q->set.nkeys;
		split = pthread_create(&helper, NULL, put_rows, &j[1]) == 0;
		if (!split)
			j[0].to = q->set.nkeys;
	}
	put_rows(&j[0]);
	if (split) {
		pthread_join(helper, NULL);
		if (j[0].nrows && j[1].nrows)
			buf_putc(b, ',');
		buf_append(b, tail.data, tail.len);
	}
	buf_release(&tail);
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
	put_all_rows(q, b);
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
